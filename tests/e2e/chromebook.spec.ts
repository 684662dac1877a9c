// The installed app as a place the OS hands files to (a Chromebook's Files app, its share sheet):
// the manifest's file handlers and share target, Chromium's installability check, a real
// multipart POST to the share target with the network off, and the launchQueue consumer fed real
// FileSystemFileHandles (an invoice, and a `.stack` file that opens as a new stack). One
// persistent profile: installability is judged in a normal profile, not an incognito one.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, expect, test, type BrowserContext, type Page } from './test.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';
import { E2E_APP_URL } from './ports.ts';
import { fixture } from '../support/fixtures.ts';

test.describe.configure({ mode: 'serial' });

const work = mkdtempSync(join(tmpdir(), 'stackdocs-chromebook-'));
let context: BrowserContext;
let page: Page;
const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

test.beforeAll(async () => {
  context = await chromium.launchPersistentContext(join(work, 'profile'), { executablePath: chromiumPath, args: chromiumArgs, baseURL: E2E_APP_URL, viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  await context.addInitScript(() => {
    // The download path for the export below (the save picker cannot be driven).
    delete (Window.prototype as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    delete (window as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    // The OS's side of "open with": the launch queue hands its consumer to the test, which feeds
    // it what Chromium would (real file handles). The app's own consumer is what is tested.
    Object.defineProperty(window, 'launchQueue', {
      configurable: true,
      value: { setConsumer: (consumer: unknown) => void ((window as unknown as { __launch: unknown }).__launch = consumer) },
    });
  });
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  // The service worker (registered a few seconds after the page settles) controls the page.
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
  });
});

test.afterAll(async () => {
  await context?.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

/** A file of the stack's user space, read back from OPFS, as its sha256. */
async function storedSha(path: string): Promise<string | null> {
  const bytes = await page.evaluate(async (path) => {
    try {
      let dir = await navigator.storage.getDirectory();
      const parts = path.split('/');
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
      return Array.from(new Uint8Array(await (await (await dir.getFileHandle(parts.at(-1)!)).getFile()).arrayBuffer()));
    } catch {
      return null;
    }
  }, path);
  return bytes ? sha256(Uint8Array.from(bytes)) : null;
}

/** Puts `bytes` in a file outside any stack and hands its FileSystemFileHandle to the app's launch consumer. */
async function openWithApp(name: string, bytes: Buffer): Promise<void> {
  await page.evaluate(
    async ({ name, base64 }) => {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('launched-by-test', { create: true });
      const handle = await dir.getFileHandle(name, { create: true });
      const writable = await handle.createWritable();
      await writable.write(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
      await writable.close();
      const consume = (window as unknown as { __launch?: (params: { files: FileSystemHandle[] }) => void }).__launch;
      if (!consume) throw new Error('the app set no launch consumer');
      consume({ files: [handle] });
    },
    { name, base64: bytes.toString('base64') },
  );
}

/** What the share sheet sends: a multipart POST of `name` to the share target, as a navigation. */
async function share(name: string, bytes: Buffer): Promise<void> {
  await page.evaluate(
    ({ name, base64 }) => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = 'share-target';
      form.enctype = 'multipart/form-data';
      const input = document.createElement('input');
      input.type = 'file';
      input.name = 'files';
      const files = new DataTransfer();
      files.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type: 'application/pdf' }));
      input.files = files.files;
      form.append(input);
      document.body.append(form);
      form.submit();
    },
    { name, base64: bytes.toString('base64') },
  );
}

test('the manifest opens documents and .stack files and takes shares; Chromium finds the app installable', async () => {
  const manifest = (await (await page.request.get('manifest.webmanifest')).json()) as {
    file_handlers: { action: string; accept: Record<string, string[]> }[];
    share_target: { action: string; method: string; enctype: string; params: { files: { name: string; accept: string[] }[] } };
  };
  const accept = manifest.file_handlers[0]!.accept;
  expect(Object.values(accept).flat().sort()).toEqual(['.csv', '.docx', '.jpeg', '.jpg', '.markdown', '.md', '.pdf', '.png', '.stack', '.tif', '.tiff', '.txt', '.webp', '.xlsx']);
  expect(manifest.share_target).toMatchObject({ action: './share-target', method: 'POST', enctype: 'multipart/form-data', params: { files: [{ name: 'files' }] } });
  expect(manifest.share_target.params.files[0]!.accept).toEqual(expect.arrayContaining(['application/pdf', 'image/jpeg', '.stack']));
  const cdp = await context.newCDPSession(page);
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] };
  expect(installabilityErrors).toEqual([]);
  // The browser's offer to install, as the app's own button.
  await expect(page.getByRole('button', { name: 'Install app' })).toBeVisible({ timeout: 30_000 });
});

test('a file shared from the OS with the network off is kept by the service worker and lands in the stack the user picks', async () => {
  const bytes = fixture('plain-1.pdf');
  await context.setOffline(true);
  try {
    await share('shared-invoice.pdf', bytes);
    await expect(page).toHaveURL(/\?share=[\w-]+$/);
    const dialog = page.getByRole('dialog', { name: 'Shared with Stackdocs: shared-invoice.pdf' });
    await expect(dialog).toBeVisible({ timeout: 30_000 });
    await expect(dialog.getByRole('combobox', { name: 'Add to' })).toHaveValue('default');
    await dialog.getByRole('button', { name: 'Add' }).click();
    await expect(dialog).toBeHidden();
    // Placed once: the address forgets the share, and the file is in the stack, byte for byte.
    await expect(page).toHaveURL(E2E_APP_URL.replace(/\/?$/, '/'));
    await expect.poll(() => storedSha('stacks/default/documents/shared-invoice.pdf'), { timeout: 30_000 }).toBe(sha256(bytes));
    await expect(page.getByRole('button', { name: 'Show shared-invoice.pdf' })).toBeVisible();
    const left = await page.evaluate(async () => (await (await caches.open('stackdocs-share')).keys()).length);
    expect(left).toBe(0);
  } finally {
    await context.setOffline(false);
  }
});

test('files opened with the app from the OS: an invoice joins the open stack, a .stack file opens as a new stack', async () => {
  test.setTimeout(3 * 60_000);
  const pdf = fixture('plain-2.pdf');
  await openWithApp('opened-invoice.pdf', pdf);
  await expect.poll(() => storedSha('stacks/default/documents/opened-invoice.pdf'), { timeout: 30_000 }).toBe(sha256(pdf));
  await expect(page.getByRole('button', { name: 'Show opened-invoice.pdf' })).toBeVisible();

  // A real .stack file: this stack, exported.
  await page.getByRole('button', { name: /^Stack: / }).click();
  await page.getByRole('region', { name: 'Stacks' }).getByRole('button', { name: 'Export stack…' }).click();
  const exporting = page.getByRole('dialog', { name: 'Export “My stack”' });
  const downloaded = page.waitForEvent('download', { timeout: 2 * 60_000 });
  await exporting.getByRole('button', { name: 'Export' }).click();
  const file = join(work, 'exported.stack');
  await (await downloaded).saveAs(file);
  await exporting.getByRole('button', { name: 'Open the stack again' }).click();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();

  await openWithApp('Team inbox.stack', readFileSync(file));
  await expect(page).toHaveURL(/\?stack=s-/, { timeout: 2 * 60_000 });
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const imported = new URL(page.url()).searchParams.get('stack')!;
  expect(await storedSha(`stacks/${imported}/documents/opened-invoice.pdf`)).toBe(sha256(pdf));
});

test('a share can go to another stack: that stack opens in this tab and takes the file', async () => {
  const from = new URL(page.url()).searchParams.get('stack');
  expect(from).toMatch(/^s-/);
  const bytes = fixture('german-1.pdf');
  await share('for-the-first-stack.pdf', bytes);
  const dialog = page.getByRole('dialog', { name: 'Shared with Stackdocs: for-the-first-stack.pdf' });
  await expect(dialog).toBeVisible({ timeout: 30_000 });
  await dialog.getByRole('combobox', { name: 'Add to' }).selectOption('default');
  await dialog.getByRole('button', { name: 'Add' }).click();
  await expect(page).toHaveURL(/\?stack=default$/, { timeout: 30_000 });
  await expect.poll(() => storedSha('stacks/default/documents/for-the-first-stack.pdf'), { timeout: 30_000 }).toBe(sha256(bytes));
  expect(await storedSha(`stacks/${from}/documents/for-the-first-stack.pdf`)).toBeNull();
});
