// Kiosk mode on the real app, on Playwright's clock: the owner sets it up with a PIN; a visitor
// sees no Settings, stack menu or terminal, is never asked to allow more than the owner did, and
// chats, uploads and opens a window; after the idle time and a countdown (which a touch cancels)
// the stack is exactly as the owner left it, in its files too; five wrong PINs lock the owner's
// entry for a minute, and the right one ends kiosk mode.
import { expect, test, type Page } from './test.ts';
import { assistant, openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';

const VISITOR_SECRET = 'VISITOR-PASSPORT-90210';

/** The names of the files under the stack's folder `sub` in OPFS (read without the app). */
async function filesIn(page: Page, stackId: string, sub: string): Promise<string[]> {
  return page.evaluate(
    async ([id, path]) => {
      let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks').then((stacks) => stacks.getDirectoryHandle(id!));
      for (const part of path!.split('/')) dir = await dir.getDirectoryHandle(part);
      const names: string[] = [];
      for await (const [name] of (dir as unknown as { entries(): AsyncIterable<[string, unknown]> }).entries()) names.push(name);
      return names.sort();
    },
    [stackId, sub],
  );
}

/** sha256 of every file under an OPFS folder (`stacks/<id>` or `kiosk/<id>`), by path. */
async function digests(page: Page, root: string, id: string): Promise<Record<string, string>> {
  return page.evaluate(
    async ([top, stack]) => {
      const out: Record<string, string> = {};
      const walk = async (dir: FileSystemDirectoryHandle, prefix: string) => {
        for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
          const path = prefix ? `${prefix}/${name}` : name;
          if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle, path);
          else {
            const bytes = await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer();
            out[path] = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
          }
        }
      };
      await walk(await (await navigator.storage.getDirectory()).getDirectoryHandle(top!).then((dir) => dir.getDirectoryHandle(stack!)), '');
      return out;
    },
    [root, id],
  );
}

const countdown = (page: Page) => page.getByRole('alertdialog');
const titles = (page: Page) => page.locator('.subbar-title');

test('kiosk: locked for visitors, reset to the owner\'s stack after the idle time, left with the PIN', async ({ page, context }) => {
  test.setTimeout(4 * 60_000);
  await page.clock.install();
  await openApp(page);
  const stackId = await page.evaluate(() => localStorage.getItem('stackdocs:last-stack') ?? 'default');

  // The owner's stack: a price list and a notes window, then kiosk mode with a PIN.
  await page.getByLabel('Attach files').setInputFiles([{ name: 'price-list.txt', mimeType: 'text/plain', buffer: Buffer.from('Coffee 2.50\n') }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read price-list.txt' })).toBeVisible();
  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Notes' }).click();
  await expect(titles(page)).toHaveText(['Untitled notes']);
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const setup = page.getByRole('region', { name: 'Kiosk mode' });
  await setup.getByLabel('Owner PIN (6 to 12 digits)').fill('246813');
  await setup.getByLabel('PIN again').fill('246810');
  await setup.getByRole('button', { name: 'Start kiosk mode' }).click();
  await expect(setup.getByRole('alert')).toHaveText('The two PINs differ.');
  await setup.getByLabel('PIN again').fill('246813');
  await setup.getByRole('button', { name: 'Start kiosk mode' }).click();

  // The kiosk: no Settings, no stack menu, no terminal to open; the stack as the owner left it.
  await expect(page.getByRole('button', { name: 'Owner' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.getByRole('button', { name: 'Settings', exact: true })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^Stack: / })).toHaveCount(0);
  await expect(titles(page)).toHaveText(['Untitled notes']);
  const kept = await page.evaluate(() => JSON.parse(localStorage.getItem('stackdocs:kiosk')!));
  expect(JSON.stringify(kept)).not.toContain('246813');
  await page.getByRole('button', { name: 'Add a window' }).click();
  await expect(page.getByRole('menuitem', { name: 'Terminal' })).toHaveCount(0);
  await page.getByRole('menuitem', { name: 'Tasks' }).click();
  await expect(titles(page)).toHaveText(['Untitled notes', 'Tasks']);

  // A visitor chats and uploads; a call that would need asking is refused without a question.
  await loadScript({
    name: 'kiosk visitor',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'web_fetch', input: { url: 'http://elsewhere.example.test/page' } }] } },
      { expect: { tool_result: { contains: 'Not allowed on this kiosk', is_error: true } }, reply: { content: [{ type: 'text', text: 'That page cannot be opened on this kiosk.' }] } },
    ],
  });
  await send(page, `my passport number is ${VISITOR_SECRET}, look up the visa rules`);
  await expect(assistant(page).last()).toHaveText('That page cannot be opened on this kiosk.');
  await expect(page.getByRole('group', { name: 'Permission request' })).toHaveCount(0);
  expect((await fakeState()).failures).toEqual([]);
  await page.getByLabel('Attach files').setInputFiles([{ name: 'passport.txt', mimeType: 'text/plain', buffer: Buffer.from(`${VISITOR_SECRET}\n`) }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read passport.txt' })).toBeVisible();
  expect(await filesIn(page, stackId, 'documents')).toEqual(['passport.txt', 'price-list.txt']);

  // The tab goes away mid-visit and opens again, offline (the app's offline copy is in place): it starts over first.
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('button', { name: 'Owner' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await expect(page.locator('[data-role=user], [data-role=assistant]')).toHaveCount(0);
  expect(await filesIn(page, stackId, 'documents')).toEqual(['price-list.txt']);
  await context.setOffline(false);

  // Another visitor: an upload and a window.
  await page.getByLabel('Attach files').setInputFiles([{ name: 'passport.txt', mimeType: 'text/plain', buffer: Buffer.from(`${VISITOR_SECRET}\n`) }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read passport.txt' })).toBeVisible();
  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Tasks' }).click();
  await expect(titles(page)).toHaveText(['Untitled notes', 'Tasks']);

  // Idle: the countdown shows; a touch keeps the visitor's session.
  await page.clock.fastForward('03:01');
  await expect(countdown(page)).toContainText('Starting over for the next visitor in');
  await page.mouse.click(5, 300);
  await expect(countdown(page)).toHaveCount(0);
  await expect(titles(page)).toHaveText(['Untitled notes', 'Tasks']);

  // Idle again, to the end of the countdown: the stack is the owner's again, in its files too.
  await page.clock.fastForward('03:01');
  await expect(countdown(page)).toBeVisible();
  await page.clock.fastForward('00:21');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await expect(page.locator('[data-role=user], [data-role=assistant]')).toHaveCount(0);
  await expect(titles(page)).toHaveText(['Untitled notes']);
  expect(await filesIn(page, stackId, 'documents')).toEqual(['price-list.txt']);
  const everywhere = await page.evaluate(async (id) => {
    const texts: string[] = [];
    const walk = async (dir: FileSystemDirectoryHandle) => {
      for await (const [, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
        if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle);
        else texts.push(await (await (handle as FileSystemFileHandle).getFile()).text());
      }
    };
    await walk(await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks').then((stacks) => stacks.getDirectoryHandle(id)));
    return texts.join('\n');
  }, stackId);
  expect(everywhere).not.toContain(VISITOR_SECRET);
  expect(everywhere).toContain('Coffee 2.50');
  // Checked by content: every file is the reset point's, byte for byte, but the two databases,
  // which the stack writes again as it opens (their visitor rows are gone, as searched above).
  const point = await digests(page, 'kiosk', stackId);
  const now = await digests(page, 'stacks', stackId);
  const databases = /^\.os\/memory\/(transcript|memory)\.db/;
  const settled = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).filter(([path]) => !databases.test(path) && path !== '.reset-point-complete'));
  expect(settled(now)).toEqual(settled(point));
  expect(Object.keys(settled(now))).toEqual(expect.arrayContaining(['documents/price-list.txt', '.os/config/canvas.json']));

  // The owner's PIN: five wrong ones lock entry for a minute, then the right one ends kiosk mode.
  await page.getByRole('button', { name: 'Owner' }).click();
  const owner = page.getByRole('dialog', { name: 'Leave kiosk mode' });
  for (let n = 1; n <= 5; n++) {
    await owner.getByLabel('Owner PIN').fill('1111');
    await owner.getByRole('button', { name: 'Leave kiosk mode' }).click();
    await expect(owner.getByRole('alert')).toHaveText(n < 5 ? `Wrong PIN (${n} of 5).` : 'Wrong PIN, 5 times: entry is locked for a minute.');
  }
  await owner.getByLabel('Owner PIN').fill('246813');
  await owner.getByRole('button', { name: 'Leave kiosk mode' }).click();
  await expect(owner.getByRole('alert')).toContainText('Too many wrong PINs: try again in');
  await page.clock.fastForward('01:01');
  await owner.getByLabel('Owner PIN').fill('246813');
  await owner.getByRole('button', { name: 'Leave kiosk mode' }).click();
  await expect(page.getByRole('button', { name: 'Settings', exact: true })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('button', { name: /^Stack: / })).toBeVisible();
  expect(await page.evaluate(() => localStorage.getItem('stackdocs:kiosk'))).toBeNull();
  expect(await page.evaluate(async () => {
    const kiosk = await (await navigator.storage.getDirectory()).getDirectoryHandle('kiosk');
    const names: string[] = [];
    for await (const [name] of (kiosk as unknown as { entries(): AsyncIterable<[string, unknown]> }).entries()) names.push(name);
    return names;
  })).toEqual([]);
});
