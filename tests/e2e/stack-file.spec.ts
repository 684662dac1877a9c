// A stack is a file: one browser profile makes a stack (an invoice, its extraction corrected and
// the correction learned, a note, a file the agent wrote, a scheduled task, and with the computer image a file on the
// system disk and a package installed from a wheel) and exports it; a second profile, offline
// once the app is loaded, opens the file as a new stack and finds all of it, then works on in it.
// The file carries neither the user's API key nor the device's token. Hostile files are refused,
// each with its own message, and leave no stack behind. Each profile has its own user-data dir.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strFromU8, strToU8, zipSync, type Zippable } from 'fflate';
import { chromium, expect, test, type BrowserContext, type Page } from './test.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';
import { E2E_APP_URL, E2E_PROXY_URL } from './ports.ts';
import { fakeState, loadScript } from './fake.ts';
import { send, typeInTerminal } from './app.ts';
import { putFile } from './opfs.ts';
import { fixture, invoice } from '../support/fixtures.ts';
import { unpackStackFile } from '../support/stack-zip.ts';

const HAS_IMAGE = existsSync(join(import.meta.dirname, '..', '..', 'vm-images', 'out', 'latest', 'manifest.json'));
const API_KEY = 'test-key-e2e-stackfile-4b1f9c0d7e2a';
test.describe.configure({ mode: 'serial' });

const work = mkdtempSync(join(tmpdir(), 'stackdocs-stack-file-'));
const exported = join(work, 'exported.stack');
const profiles: { context: BrowserContext; dir: string }[] = [];

async function launch(name: string): Promise<Page> {
  const dir = join(work, name);
  const context = await chromium.launchPersistentContext(dir, { executablePath: chromiumPath, args: chromiumArgs, baseURL: E2E_APP_URL, viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  // The download path (browsers without the File System Access save picker); the picker cannot be driven.
  await context.addInitScript(() => {
    delete (Window.prototype as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    delete (window as { showSaveFilePicker?: unknown }).showSaveFilePicker;
  });
  profiles.push({ context, dir });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  return page;
}

test.afterAll(async () => {
  for (const { context } of profiles) await context.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const menu = (page: Page) => page.getByRole('button', { name: /^Stack: / });
const panel = (page: Page) => page.getByRole('region', { name: 'Stacks' });
const terminal = (page: Page) => page.getByRole('region', { name: 'Terminal: root shell on the computer' });
const stackId = (page: Page) => new URL(page.url()).searchParams.get('stack');

async function openMenu(page: Page) {
  if (!(await panel(page).isVisible())) await menu(page).click();
  await expect(panel(page)).toBeVisible();
}

async function run(page: Page, command: string, expected: RegExp, timeout = 120_000): Promise<void> {
  if (!(await terminal(page).isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
  }
  // The first start copies the image in (or fetches what a wake reads); the shell is there once ready.
  await expect(page.getByRole('status', { name: 'Computer' })).toContainText(/ready/i, { timeout });
  await typeInTerminal(page, terminal(page), `${command}\n`);
  await expect(terminal(page).locator('.xterm-rows')).toContainText(expected, { timeout });
}

/** A pure-Python wheel, as pip builds them: the module, its metadata and a RECORD with hashes. */
function wheel(): Buffer {
  const files: Record<string, string> = {
    'stackdemo/__init__.py': 'VALUE = 42\n',
    'stackdemo-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: stackdemo\nVersion: 1.0\n',
    'stackdemo-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\nGenerator: stackdocs-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  };
  const record = Object.entries(files).map(([path, text]) => `${path},sha256=${createHash('sha256').update(text).digest('base64url')},${Buffer.byteLength(text)}`);
  files['stackdemo-1.0.dist-info/RECORD'] = [...record, 'stackdemo-1.0.dist-info/RECORD,,', ''].join('\n');
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([path, text]) => [path, strToU8(text)]))));
}

const layoutOf = (page: Page, id: string) => page.evaluate((key) => JSON.parse(localStorage.getItem(key) ?? 'null') as { state: { geometry: Record<string, unknown> } } | null, `stackdocs:layout:${id}`);

test('a stack exported in one browser opens in another as a new stack with everything, and works on', async () => {
  test.setTimeout(HAS_IMAGE ? 25 * 60_000 : 5 * 60_000);
  const fakeUrl = process.env.E2E_FAKE_URL!;
  const doc = invoice('plain-1');
  await loadScript({
    name: 'stack file: the first browser',
    turns: [
      { expect: { last_user_text: 'extract the vendor data' }, reply: { content: [{ type: 'tool_use', name: 'read_ocr', input: { document: `${doc.id}.pdf` } }] } },
      {
        expect: { tool_result: { contains: doc.vendor } },
        reply: { content: [{ type: 'tool_use', name: 'save_extraction', input: { document: `${doc.id}.pdf`, fields: { vendor: doc.vendor, total: doc.total } } }] },
      },
      { reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'To do', content: 'Pay **NORTHWIND TRADERS** by Friday.' } }] } },
      { reply: { content: [{ type: 'tool_use', name: 'write', input: { path: 'artifacts/summary.txt', content: 'one invoice, vendor corrected\n' } }] } },
      { reply: { content: [{ type: 'text', text: 'The table and a note are on the canvas.' }] } },
      {
        expect: { last_user_text: 'the vendor is wrong' },
        reply: { content: [{ type: 'tool_use', name: 'save_extraction', input: { document: `${doc.id}.pdf`, fields: { vendor: 'NORTHWIND TRADERS' } } }] },
      },
      { expect: { tool_result: { contains: 'Updated the extraction' } }, reply: { content: [{ type: 'text', text: 'Fixed: NORTHWIND TRADERS.' }] } },
      {
        expect: { model: 'claude-haiku-5-5' },
        reply: { content: [{ type: 'text', text: `CORRECTION (1.0): The vendor of ${doc.id}.pdf is NORTHWIND TRADERS, not ${doc.vendor}.` }] },
      },
      {
        expect: { last_user_text: 'every Monday at 9' },
        reply: { content: [{ type: 'tool_use', name: 'schedule_task', input: { title: 'Weekly invoices', prompt: 'Check for new invoices.', when: 'cron', cron: '0 9 * * 1' } }] },
      },
      { expect: { tool_result: { contains: 'Scheduled "Weekly invoices"' } }, reply: { content: [{ type: 'text', text: 'Scheduled for Mondays at 9.' }] } },
    ],
  });

  const a = await launch('first-profile');
  // The user's own key is saved in this stack, then the proxy is used: the file must carry neither.
  await a.getByRole('button', { name: 'Settings' }).click();
  await a.getByRole('radio', { name: 'Anthropic, with my own key' }).check();
  await a.getByRole('textbox', { name: 'Model endpoint' }).fill(fakeUrl);
  await a.getByLabel('API key').fill(API_KEY);
  await a.getByRole('button', { name: 'Save' }).click();
  await expect(a.getByRole('dialog')).toBeHidden();
  await a.getByRole('button', { name: 'Settings' }).click();
  await a.getByRole('radio', { name: 'Stackdocs proxy' }).check();
  await a.getByRole('textbox', { name: 'Model endpoint' }).fill(E2E_PROXY_URL);
  await expect(a.getByLabel('API key')).toHaveCount(0);
  await a.getByRole('button', { name: 'Save' }).click();
  await expect(a.getByRole('dialog')).toBeHidden();

  await a.getByLabel('Attach files').setInputFiles([{ name: `${doc.id}.pdf`, mimeType: 'application/pdf', buffer: fixture(`${doc.id}.pdf`) }]);
  await expect(a.locator('[data-role=notice]').filter({ hasText: `Read ${doc.id}.pdf` })).toBeVisible();
  await send(a, 'extract the vendor data');
  await expect(a.locator('[data-role=assistant]').last()).toHaveText('The table and a note are on the canvas.');
  await send(a, 'the vendor is wrong, it is NORTHWIND TRADERS');
  await expect(a.locator('[data-role=assistant]').last()).toHaveText('Fixed: NORTHWIND TRADERS.');
  await expect(a.getByRole('button', { name: 'Stop' })).toHaveCount(0);
  await a.getByRole('button', { name: 'Settings' }).click();
  await a.getByRole('button', { name: 'Learn now' }).click();
  await expect(a.getByRole('status').filter({ hasText: 'Learned' })).toContainText('Learned 1 thing');
  await a.getByRole('button', { name: 'Cancel' }).click();
  await expect(a.getByRole('region', { name: 'Notes window: To do' })).toBeVisible();
  // A scheduled task, which travels in the stack's database.
  await send(a, 'every Monday at 9, check for new invoices');
  await a.getByRole('group', { name: 'Permission request' }).getByRole('button', { name: 'Allow', exact: true }).click();
  await expect(a.locator('[data-role=assistant]').last()).toHaveText('Scheduled for Mondays at 9.');
  const deviceTokens = await a.evaluate(async () => {
    const device = await (await navigator.storage.getDirectory()).getDirectoryHandle('device');
    const all = JSON.parse(await (await (await device.getFileHandle('proxy-credentials.json')).getFile()).text()) as Record<string, { token: string }>;
    return Object.values(all).map((credential) => credential.token);
  });
  expect(deviceTokens.length).toBeGreaterThan(0);

  if (HAS_IMAGE) {
    // A wheel on disk (put in /workspace before the computer first starts), installed with pip,
    // and a file on the system disk.
    await putFile(a, 'stacks/default/artifacts/stackdemo-1.0-py3-none-any.whl', wheel());
    await run(a, 'pip install --no-index --break-system-packages /workspace/artifacts/stackdemo-1.0-py3-none-any.whl', /Successfully installed stackdemo-1\.0/, 10 * 60_000);
    await run(a, "echo 'made on the first browser' > /root/made-here.txt && sync && echo WROTE-$((6*7))", /WROTE-42/);
  }
  const layoutA = await layoutOf(a, 'default');
  expect(Object.keys(layoutA?.state.geometry ?? {}).length).toBeGreaterThanOrEqual(3);

  // A remote MCP server with its key: the key stays here unless ticked.
  await putFile(a, 'stacks/default/.os/config/mcp.json', Buffer.from(JSON.stringify({ mcpServers: { crm: { url: 'https://crm.example.com/mcp', headers: { Authorization: 'Bearer crm-e2e-SECRET' } } } })));
  await openMenu(a);
  await panel(a).getByRole('button', { name: 'Export stack…' }).click();
  const exporting = a.getByRole('dialog', { name: 'Export “My stack”' });
  // What goes is said before anything is written, read while the stack is open.
  const goes = exporting.getByRole('list', { name: 'What the file holds' });
  await expect(goes).toContainText('The conversation and its history');
  await expect(goes).toContainText(/\/workspace\/documents\/: \d+ files?/);
  await expect(goes).toContainText('MCP servers: crm');
  await expect(exporting.getByRole('checkbox', { name: "MCP server 'crm': header Authorization" })).not.toBeChecked();
  const downloaded = a.waitForEvent('download', { timeout: 5 * 60_000 });
  await exporting.getByRole('button', { name: 'Export' }).click();
  // Done, or refused with a message (shown here when it is).
  await expect(exporting.getByRole('status').or(exporting.getByRole('alert'))).toBeVisible({ timeout: 5 * 60_000 });
  await expect(exporting.getByRole('alert')).toHaveCount(0);
  await expect(exporting.getByRole('status')).toContainText(/Exported “My stack” \(.+\): the browser is downloading it\./);
  const download = await downloaded;
  expect(download.suggestedFilename()).toBe('My stack.stack');
  await download.saveAs(exported);
  const bytes = readFileSync(exported);
  console.log(`exported .stack: ${(bytes.length / 1e6).toFixed(2)} MB${HAS_IMAGE ? ' (with the computer)' : ''}`);
  // Neither in the file's bytes nor in any of its entries unpacked.
  const entries = await unpackStackFile(new Uint8Array(bytes));
  // Only what docs/stack-file.md lists: no side file of the live databases.
  expect(Object.keys(entries).filter((name) => /\.db-(wal|shm|journal)$/.test(name))).toEqual([]);
  for (const data of [bytes, ...Object.values(entries).map((entry) => Buffer.from(entry))]) {
    expect(data.includes(API_KEY)).toBe(false);
    expect(data.includes('crm-e2e-SECRET')).toBe(false);
    for (const token of deviceTokens) expect(data.includes(token)).toBe(false);
  }
  // The exported stack opens again here, as it was.
  await exporting.getByRole('button', { name: 'Open the stack again' }).click();
  await expect(a.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(a.getByRole('region', { name: 'Notes window: To do' })).toBeVisible();

  // The second browser: the app loads, then the network goes.
  const b = await launch('second-profile');
  await b.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
  });
  const contextB = profiles[1]!.context;
  await contextB.setOffline(true);
  await openMenu(b);
  await panel(b).getByLabel('Stack file to open').setInputFiles(exported);
  await expect(b).toHaveURL(/\?stack=s-/, { timeout: 5 * 60_000 });
  await expect(b.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const imported = stackId(b)!;
  await expect(menu(b)).toHaveAccessibleName('Stack: My stack (imported)');
  // The transcript, the table with its corrected cell, the note, the document, and their layout.
  await expect(b.locator('[data-role=user]')).toHaveText(['extract the vendor data', 'the vendor is wrong, it is NORTHWIND TRADERS', 'every Monday at 9, check for new invoices']);
  await expect(b.locator('[data-role=assistant]').last()).toHaveText('Scheduled for Mondays at 9.');
  const table = b.getByRole('region', { name: 'Table window: Extracted data' });
  await expect(table.getByRole('cell', { name: 'NORTHWIND TRADERS' })).toBeVisible();
  await expect(b.getByRole('region', { name: 'Notes window: To do' })).toContainText('Pay NORTHWIND TRADERS by Friday.');
  await expect(b.getByRole('region', { name: `Document window: ${doc.id}.pdf` })).toBeVisible();
  expect((await layoutOf(b, imported))?.state.geometry).toEqual(layoutA?.state.geometry);
  const summary = await b.evaluate(async (id) => {
    const stack = await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle(id);
    return (await (await (await stack.getDirectoryHandle('artifacts')).getFileHandle('summary.txt')).getFile()).text();
  }, imported);
  expect(summary).toBe('one invoice, vendor corrected\n');
  // The scheduled task, with its schedule.
  await b.getByRole('button', { name: 'Add a window' }).click();
  await b.getByRole('menuitem', { name: 'Tasks' }).click();
  await expect(b.getByRole('region', { name: 'Tasks window: Tasks' }).getByRole('listitem', { name: 'Weekly invoices' })).toContainText('Cron 0 9 * * 1');
  // A new upload works offline.
  await b.getByLabel('Attach files').setInputFiles([{ name: 'terms.txt', mimeType: 'text/plain', buffer: Buffer.from('Payment within 30 days.\n') }]);
  await expect(b.locator('[data-role=notice]').filter({ hasText: 'Added terms.txt' })).toBeVisible();

  // Online again: the model finds the learned correction in memory; the computer fetches its image.
  await contextB.setOffline(false);
  await loadScript({
    name: 'stack file: the second browser',
    turns: [
      { expect: { last_user_text: 'who is the vendor' }, reply: { content: [{ type: 'tool_use', name: 'search_memory', input: { query: 'vendor' } }] } },
      { expect: { tool_result: { contains: 'NORTHWIND TRADERS', is_error: false } }, reply: { content: [{ type: 'text', text: 'NORTHWIND TRADERS, as you corrected.' }] } },
    ],
  });
  await b.reload();
  await expect(b.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await send(b, 'who is the vendor of the invoice?');
  await expect(b.locator('[data-role=assistant]').last()).toHaveText('NORTHWIND TRADERS, as you corrected.');
  expect((await fakeState()).failures).toEqual([]);

  if (HAS_IMAGE) {
    await run(b, 'cat /root/made-here.txt', /made on the first browser/, 10 * 60_000);
    await run(b, "python3 -c 'import stackdemo; print(\"pkg\", stackdemo.VALUE)'", /pkg 42/);
    await run(b, 'cat /workspace/artifacts/summary.txt; echo NEW-$((7*6))', /NEW-42/);
  }
});

/** The exported file's entries, unpacked once for every hostile variant of it. */
let unpacked: Record<string, Uint8Array> | null = null;

/**
 * The exported file, changed and zipped again with its manifest first. Stored, not deflated:
 * deflating the unpacked entries again took 2.8 min for the seven files beside two running
 * computers (24 s stored). An entry given with its options (a bomb's zeros) is deflated as they say.
 */
async function rezip(change: (files: Zippable, manifest: { format_version: number; image: { recipe: string | null }; entries: { path: string; size: number; sha256: string }[] }) => void): Promise<Buffer> {
  unpacked ??= await unpackStackFile(readFileSync(exported));
  const { 'manifest.json': manifestBytes, ...files }: Zippable = unpacked;
  const manifest = JSON.parse(strFromU8(manifestBytes as Uint8Array));
  change(files, manifest);
  const ordered: Zippable = { 'manifest.json': strToU8(JSON.stringify(manifest)) };
  // The checksums stay the last entry, where format 2 has them.
  for (const [name, data] of Object.entries(files)) if (name !== 'checksums.json') ordered[name] = data;
  if (files['checksums.json']) ordered['checksums.json'] = files['checksums.json'];
  return Buffer.from(zipSync(ordered, { level: 0 }));
}

test('hostile .stack files are refused, each with its own message, and leave no stack behind', async () => {
  test.setTimeout(5 * 60_000);
  test.skip(!existsSync(exported), 'the export test did not run');
  const page = profiles[1] ? profiles[1].context.pages()[0]! : await launch('second-profile');
  const listed = async () => {
    await openMenu(page);
    const names = await panel(page).locator('.stack-row').count();
    return names;
  };
  const before = await listed();
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const withEntry = (path: string) => rezip((files, manifest) => {
    files[path] = strToU8('x');
    manifest.entries.push({ path, size: 1, sha256: sha('x') });
  });
  const full = readFileSync(exported);
  const cases: [string, Buffer, string | RegExp][] = [
    ['dotdot', await withEntry('stack/../escaped.txt'), 'This stack file is refused: "stack/../escaped.txt" leaves the stack (a path with "..").'],
    ['absolute', await withEntry('/etc/cron.d/evil'), 'This stack file is refused: "/etc/cron.d/evil" is an absolute path.'],
    ['checksum', await rezip((files) => void (files['stack/artifacts/summary.txt'] = strToU8('one invoice, vendor CORRECTED\n'))), 'This stack file is damaged: "stack/artifacts/summary.txt" does not match its checksum.'],
    ['truncated', full.subarray(0, Math.floor(full.length / 2)), 'This stack file ends early: the list of its files, at its end, is missing. It was not copied whole; export it again.'],
    ['quota', await rezip((_files, manifest) => void (manifest.entries.find((entry) => entry.path.startsWith('stack/documents/'))!.size = 400e12)), /^The stack was not imported: it needs .+ and the browser's storage for Stackdocs has .+ left/],
    [
      'bomb',
      await rezip((files, manifest) => {
        files['stack/documents/bomb.txt'] = [new Uint8Array(30_000_000), { level: 9 }];
        manifest.entries.push({ path: 'stack/documents/bomb.txt', size: 100, sha256: sha('x') });
      }),
      'This stack file is refused: "stack/documents/bomb.txt" unpacks to more than the 100 bytes its manifest declares.',
    ],
    ['version', await rezip((_files, manifest) => void (manifest.format_version = 7)), 'This stack file is format version 7; this version of Stackdocs reads format versions 1 and 2 only. Open it in a newer Stackdocs.'],
    ['image', await rezip((_files, manifest) => void (manifest.image.recipe = '0123456789abcdef')), /^This stack's computer runs on system image 0123456789abcdef, but this Stackdocs (has system image [0-9a-f]+, and the file does not include its image|has no system image)\./],
  ];
  for (const [name, file, message] of cases) {
    const path = join(work, `${name}.stack`);
    writeFileSync(path, file);
    await openMenu(page);
    await panel(page).getByLabel('Stack file to open').setInputFiles(path);
    const dialog = page.getByRole('dialog', { name: `Open “${name}.stack”` });
    await expect(dialog.getByRole('alert')).toHaveText(message, { timeout: 60_000 });
    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await listed(), `${name}: no stack is left behind`).toBe(before);
  }
  // Nor any folder: only the stacks listed.
  const folders = await page.evaluate(async () => {
    const names: string[] = [];
    for await (const name of ((await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')) as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    return names.length;
  });
  expect(folders).toBe(before);
});

test('with its system image included, a stack opens in an app whose image differs, offline, its own disk intact; deleting it frees the image', async () => {
  test.setTimeout(15 * 60_000);
  test.skip(!HAS_IMAGE || !profiles[0] || !profiles[1], 'needs the computer image and the first test');
  const a = profiles[0]!.context.pages()[0]!;
  await openMenu(a);
  await panel(a).getByRole('button', { name: 'Export stack…' }).click();
  const exporting = a.getByRole('dialog', { name: 'Export “My stack”' });
  await exporting.getByRole('checkbox', { name: /Include the system image/ }).check();
  const downloaded = a.waitForEvent('download', { timeout: 5 * 60_000 });
  await exporting.getByRole('button', { name: 'Export' }).click();
  await expect(exporting.getByRole('status').or(exporting.getByRole('alert'))).toBeVisible({ timeout: 5 * 60_000 });
  await expect(exporting.getByRole('alert')).toHaveCount(0);
  const withImage = join(work, 'with-image.stack');
  await (await downloaded).saveAs(withImage);
  await exporting.getByRole('button', { name: 'Open the stack again' }).click();
  await expect(a.getByRole('textbox', { name: 'Message' })).toBeEnabled();

  // The same file as an app with another system image would make it: its recipe renamed.
  const files = await unpackStackFile(readFileSync(withImage));
  console.log(`with the system image: ${(statSync(withImage).size / 1e6).toFixed(1)} MB, ${Object.keys(files).filter((name) => name.startsWith('image/')).length} image entries`);
  const manifest = JSON.parse(strFromU8(files['manifest.json']!)) as { image: { recipe: string }; includes_image: boolean; entries: { path: string; size: number }[] };
  expect(manifest.includes_image).toBe(true);
  const recipe = manifest.image.recipe;
  const other = [...recipe].reverse().join('');
  const sums = JSON.parse(strFromU8(files['checksums.json']!)) as { sha256: Record<string, string> };
  const change = (path: string, edit: (text: string) => string) => {
    files[path] = strToU8(edit(strFromU8(files[path]!)));
    manifest.entries.find((entry) => entry.path === path)!.size = files[path]!.byteLength;
    sums.sha256[path] = createHash('sha256').update(files[path]!).digest('hex');
  };
  change('image/manifest.json', (text) => text.replace(`"recipeHash": "${recipe}"`, `"recipeHash": "${other}"`).replace(`"recipeHash":"${recipe}"`, `"recipeHash":"${other}"`));
  change('stack/.os/vm/machine.json', (text) => text.replace(recipe, other));
  expect(strFromU8(files['image/manifest.json']!)).toContain(other);
  manifest.image.recipe = other;
  const ordered: Zippable = { 'manifest.json': strToU8(JSON.stringify(manifest)) };
  for (const [name, data] of Object.entries(files)) if (name !== 'manifest.json' && name !== 'checksums.json') ordered[name] = data;
  ordered['checksums.json'] = strToU8(JSON.stringify(sums));
  const renamed = join(work, 'other-image.stack');
  writeFileSync(renamed, zipSync(ordered, { level: 0 }));

  // Opened offline in the second browser, whose app serves only its own image.
  const b = profiles[1]!.context.pages()[0]!;
  const earlier = stackId(b);
  await profiles[1]!.context.setOffline(true);
  await openMenu(b);
  await panel(b).getByLabel('Stack file to open').setInputFiles(renamed);
  const opening = b.getByRole('dialog', { name: 'Open “other-image.stack”' });
  await expect.poll(async () => ((await opening.getByRole('alert').count()) ? await opening.getByRole('alert').textContent() : stackId(b) !== earlier), { timeout: 5 * 60_000 }).toBe(true);
  await expect(b.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const imported = stackId(b)!;
  await run(b, 'cat /root/made-here.txt', /made on the first browser/, 5 * 60_000);
  await run(b, "python3 -c 'import stackdemo; print(\"pkg\", stackdemo.VALUE)'", /pkg 42/);
  const kept = await b.evaluate(async (id) => {
    const root = await navigator.storage.getDirectory();
    const vm = await (await (await (await root.getDirectoryHandle('stacks')).getDirectoryHandle(id)).getDirectoryHandle('.os')).getDirectoryHandle('vm');
    const names: string[] = [];
    for await (const name of (await root.getDirectoryHandle('images')) as unknown as AsyncIterable<[string, unknown]>) names.push(name[0]);
    return { machine: JSON.parse(await (await (await vm.getFileHandle('machine.json')).getFile()).text()) as { imageHash: string }, images: names };
  }, imported);
  // Still on its own image (an app's image would have made its disk anew).
  expect(kept.machine.imageHash).toBe(other);
  expect(kept.images).toEqual([expect.stringMatching(new RegExp(`^${other}-[0-9a-f]{16}$`))]);

  // Deleting the stack frees its image too.
  await profiles[1]!.context.setOffline(false);
  const usage = () => b.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
  const before = await usage();
  await openMenu(b);
  // Its row: the one open here (the others are "My stack" and the first import, "My stack (imported)").
  await panel(b).locator('.stack-row').filter({ has: b.locator('[aria-current=true]') }).getByRole('button', { name: /^Delete My stack/ }).click();
  await b.getByRole('dialog', { name: /^Delete “My stack/ }).getByRole('button', { name: 'Delete' }).click();
  // Deleting the open stack moves the tab to another one: let it land before looking.
  await b.waitForURL((url) => url.searchParams.get('stack') !== imported, { timeout: 30_000 });
  await b.waitForLoadState();
  await expect.poll(async () => b.evaluate(async () => {
    const names: string[] = [];
    for await (const name of (await (await navigator.storage.getDirectory()).getDirectoryHandle('images')) as unknown as AsyncIterable<[string, unknown]>) names.push(name[0]);
    return names;
  }).catch((error: Error) => `not read yet: ${error.message}`), { timeout: 60_000 }).toEqual([]);
  const freed = before - (await usage());
  console.log(`deleting the stack freed ${(freed / 1e6).toFixed(0)} MB`);
  expect(freed).toBeGreaterThan(100e6);
});
