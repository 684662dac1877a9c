// Many stacks: make one, rename it, add a file, duplicate it (the copy has everything, and what
// is written in the copy stays there), see each stack's size, delete the copy after confirming,
// and the browser's storage goes down by it.
import { expect, test, type Page } from './test.ts';
import { openApp } from './app.ts';

const menu = (page: Page) => page.getByRole('button', { name: /^Stack: / });
const panel = (page: Page) => page.getByRole('region', { name: 'Stacks' });
const notice = (page: Page, text: string) => page.locator('[data-role=notice]').filter({ hasText: text });
/** Opens the stack menu unless it is open already (it stays open after a rename or a delete). */
async function openMenu(page: Page) {
  if (!(await panel(page).isVisible())) await menu(page).click();
  await expect(panel(page)).toBeVisible();
}
const stackId = (page: Page) => new URL(page.url()).searchParams.get('stack')!;

async function userFiles(page: Page, id: string): Promise<string[]> {
  return page.evaluate(async (id) => {
    const stack = await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle(id);
    const names: string[] = [];
    for await (const name of (await stack.getDirectoryHandle('documents') as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    return names.sort();
  }, id);
}

/**
 * The browser's storage used, less the system image's chunks under OPFS `base/` (shared by every
 * stack, and growing while the computer's image downloads in the background).
 */
const usage = (page: Page) =>
  page.evaluate(async () => {
    const baseBytes = async () => {
      let bytes = 0;
      const base = await (await navigator.storage.getDirectory()).getDirectoryHandle('base', { create: true });
      for await (const handle of (base as unknown as { values(): AsyncIterable<FileSystemFileHandle> }).values()) bytes += (await handle.getFile()).size;
      return bytes;
    };
    for (;;) {
      const before = await baseBytes();
      const used = (await navigator.storage.estimate()).usage ?? 0;
      if ((await baseBytes()) === before) return used - before;
    }
  });

test('stacks are made, renamed, duplicated with their files, measured and deleted', async ({ page }) => {
  await openApp(page);
  await expect(menu(page)).toHaveAccessibleName('Stack: My stack');

  // A second stack, named at once, then renamed.
  await openMenu(page);
  await panel(page).getByRole('button', { name: 'New stack…' }).click();
  const ask = page.getByRole('dialog', { name: 'New stack' });
  await ask.getByRole('textbox', { name: 'Name' }).fill('Client work');
  await ask.getByRole('button', { name: 'Create' }).click();
  await expect(page).toHaveURL(/\?stack=s-/);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(menu(page)).toHaveAccessibleName('Stack: Client work');
  const original = stackId(page);

  await openMenu(page);
  await panel(page).getByRole('button', { name: 'Rename Client work' }).click();
  const rename = page.getByRole('dialog', { name: 'Rename stack' });
  await rename.getByRole('textbox', { name: 'Name' }).fill('Acme invoices');
  await rename.getByRole('button', { name: 'Rename' }).click();
  await expect(rename).toHaveCount(0);
  await expect(menu(page)).toHaveAccessibleName('Stack: Acme invoices');

  await page.getByLabel('Attach files').setInputFiles([{ name: 'terms.txt', mimeType: 'text/plain', buffer: Buffer.from('Payment within 30 days.\n') }]);
  await expect(notice(page, 'Added terms.txt')).toBeVisible();

  // The copy opens here, with the file and the conversation that added it.
  await openMenu(page);
  await panel(page).getByRole('button', { name: 'Duplicate Acme invoices' }).click();
  const duplicate = page.getByRole('dialog', { name: 'Duplicate stack' });
  await expect(duplicate.getByRole('textbox', { name: 'Name' })).toHaveValue('Acme invoices (copy)');
  const started = Date.now();
  await duplicate.getByRole('button', { name: 'Duplicate' }).click();
  await expect(page).not.toHaveURL(new RegExp(`stack=${original}`));
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  console.log(`duplicate to the copy ready: ${Date.now() - started} ms`);
  const copy = stackId(page);
  await expect(menu(page)).toHaveAccessibleName('Stack: Acme invoices (copy)');
  await expect(notice(page, 'Added terms.txt')).toBeVisible();
  expect(await userFiles(page, copy)).toEqual(['terms.txt']);

  // What is written in the copy stays in the copy.
  await page.getByLabel('Attach files').setInputFiles([{ name: 'only-in-copy.txt', mimeType: 'text/plain', buffer: Buffer.from('draft\n') }]);
  await expect(notice(page, 'Added only-in-copy.txt')).toBeVisible();
  await openMenu(page);
  await panel(page).getByRole('button', { name: 'Acme invoices', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`stack=${original}`));
  await expect(notice(page, 'Added terms.txt')).toBeVisible();
  await expect(notice(page, 'Added only-in-copy.txt')).toHaveCount(0);
  expect(await userFiles(page, original)).toEqual(['terms.txt']);
  expect(await userFiles(page, copy)).toEqual(['only-in-copy.txt', 'terms.txt']);

  // Each stack's size, from its files.
  await openMenu(page);
  const rows = panel(page).getByRole('listitem');
  await expect(rows).toHaveCount(3);
  const sizes = panel(page).getByTestId('stack-size');
  await expect(sizes).toHaveText([/^\d+(\.\d)? (KB|MB)$/, /^\d+(\.\d)? (KB|MB)$/, /^\d+(\.\d)? (KB|MB)$/]);
  console.log(`sizes shown: ${(await rows.allInnerTexts()).map((text) => text.split('\n').slice(0, 2).join(' ')).join('; ')}`);

  // Deleting asks first, naming the stack and its size; the room comes back. Measured once the
  // service worker has its files (its precache, in the same storage, grows until it is active).
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  const before = await usage(page);
  await panel(page).getByRole('button', { name: 'Delete Acme invoices (copy)' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete “Acme invoices (copy)”?' });
  await expect(confirm).toContainText(/everything in it \(\d+(\.\d)? (KB|MB)\)/);
  await confirm.getByRole('button', { name: 'Delete' }).click();
  await expect(confirm).toHaveCount(0);
  await expect(rows).toHaveCount(2);
  await expect(panel(page).getByRole('button', { name: 'Delete Acme invoices (copy)' })).toHaveCount(0);
  await expect.poll(() => page.evaluate((id) => navigator.storage.getDirectory().then((root) => root.getDirectoryHandle('stacks')).then((stacks) => stacks.getDirectoryHandle(id)).then(() => 'there', () => 'gone'), copy)).toBe('gone');
  await expect.poll(() => usage(page)).toBeLessThan(before);
  console.log(`storage used: ${before} bytes before deleting the copy, ${await usage(page)} after`);
  await expect(menu(page)).toHaveAccessibleName('Stack: Acme invoices');
});
