// Checkpoints on the real app and computer: a mission deletes a file in /workspace, changes a file
// on the system disk and overwrites a cell the user corrected; the checkpoint taken by itself
// before that mission's first change brings all three back. "Open as new stack" makes a stack of
// it and leaves the current one as it is; "Restore" keeps the stack as it was as a checkpoint of
// its own first.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from './test.ts';
import { assistant, openApp, send, typeInTerminal } from './app.ts';
import { loadScript } from './fake.ts';

const HAS_IMAGE = existsSync(join(import.meta.dirname, '..', '..', 'vm-images', 'out', 'latest', 'manifest.json'));

const region = (page: Page, name: string) => page.getByRole('region', { name });
const terminal = (page: Page) => region(page, 'Terminal: root shell on the computer');
const timeline = (page: Page) => region(page, 'Timeline window: Timeline');

/** A file of the stack in OPFS, or null. */
function readStackFile(page: Page, stackId: string, path: string): Promise<string | null> {
  return page.evaluate(
    async ({ stackId, path }) => {
      try {
        let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks');
        const parts = [stackId, ...path.split('/')];
        for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
        return await (await (await dir.getFileHandle(parts.at(-1)!)).getFile()).text();
      } catch {
        return null;
      }
    },
    { stackId, path },
  );
}

async function run(page: Page, command: string, expected: RegExp): Promise<void> {
  if (!(await terminal(page).isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
  }
  await expect(page.getByRole('status', { name: 'Computer' })).toContainText(/ready/i, { timeout: 180_000 });
  await typeInTerminal(page, terminal(page), `${command}\n`);
  await expect(terminal(page).locator('.xterm-rows')).toContainText(expected, { timeout: 120_000 });
}

async function openTimeline(page: Page) {
  if (await timeline(page).isVisible()) return;
  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Timeline' }).click();
  await expect(timeline(page)).toBeVisible();
}

test('a checkpoint brings back a deleted file, a system file and a corrected cell; opened as a new stack it leaves the stack as it is', async ({ page }) => {
  test.skip(!HAS_IMAGE, 'needs the computer image (vm-images/build.sh)');
  test.setTimeout(12 * 60_000);
  // Where each checkpoint spent its time (the stack and VM workers log it): in the test's output.
  page.on('worker', (worker) => worker.on('console', (message) => {
    if (/^(checkpoint \S+ taken in|computer captured in)/.test(message.text())) console.log(`${new Date().toISOString()} ${message.text()}`);
  }));
  await openApp(page);
  await loadScript({
    name: 'checkpoints: set up',
    turns: [
      {
        reply: {
          content: [
            {
              type: 'tool_use',
              name: 'create_window',
              input: { kind: 'table', title: 'Invoices', columns: [{ key: 'vendor', label: 'Vendor' }, { key: 'total', label: 'Total', type: 'number' }], rows: [{ vendor: 'ACME', total: 100 }] },
            },
            { type: 'tool_use', name: 'write', input: { path: 'notes/keep.txt', content: 'keep me\n' } },
            { type: 'tool_use', name: 'bash', input: { command: 'echo original > /root/system.txt && sync && echo WROTE-$((6*7))' } },
          ],
        },
      },
      { expect: { tool_result: { contains: 'WROTE-42' } }, reply: { content: [{ type: 'text', text: 'Set up.' }] } },
    ],
  });
  await send(page, 'set things up');
  await expect(assistant(page).last()).toHaveText('Set up.', { timeout: 180_000 });

  // The user corrects a cell.
  const table = region(page, 'Table window: Invoices');
  const row = table.locator('[data-row-id]').first();
  await row.getByRole('cell').nth(1).dblclick();
  await table.getByRole('textbox', { name: 'Total, row 1' }).fill('120');
  await table.getByRole('textbox', { name: 'Total, row 1' }).press('Enter');
  await expect(row.getByRole('cell').nth(1)).toHaveText('120');

  // The mission that undoes it all: a file removed, a system file changed, the corrected cell overwritten.
  const tableId = await table.getAttribute('data-window-id');
  const rowId = await row.getAttribute('data-row-id');
  await loadScript({
    name: 'checkpoints: clean up',
    turns: [
      {
        reply: {
          content: [
            { type: 'tool_use', name: 'bash', input: { command: 'rm /workspace/notes/keep.txt && echo changed > /root/system.txt && sync && echo DONE-$((6*7))' } },
            { type: 'tool_use', name: 'update_window', input: { window_id: tableId, rows: [{ id: rowId, total: 999 }] } },
          ],
        },
      },
      { expect: { tool_result: { contains: 'DONE-42' } }, reply: { content: [{ type: 'text', text: 'Cleaned up.' }] } },
    ],
  });
  await send(page, 'clean up');
  await expect(assistant(page).last()).toHaveText('Cleaned up.', { timeout: 180_000 });
  await expect(row.getByRole('cell').nth(1)).toHaveText('999');
  await expect.poll(() => readStackFile(page, 'default', 'notes/keep.txt')).toBeNull();

  // The timeline: a checkpoint before each mission's first change, the newest first.
  await openTimeline(page);
  const entries = timeline(page).getByRole('listitem');
  await expect(entries).toHaveCount(2);
  const beforeCleanUp = entries.first();
  await expect(beforeCleanUp).toContainText('clean up');
  await expect(entries.nth(1)).toContainText('set things up');

  // Opened as a new stack: the stack as it was before "clean up"; the current one untouched.
  await beforeCleanUp.getByRole('button', { name: 'Open as new stack' }).click();
  await timeline(page).getByRole('button', { name: 'Open', exact: true }).click();
  await expect(page).toHaveURL(/\?stack=s-/, { timeout: 120_000 });
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const made = new URL(page.url()).searchParams.get('stack')!;
  expect(await readStackFile(page, made, 'notes/keep.txt')).toBe('keep me\n');
  await expect(region(page, 'Table window: Invoices').locator('[data-row-id]').first().getByRole('cell').nth(1)).toHaveText('120');
  await run(page, 'cat /root/system.txt; ls /workspace/notes', /original\s*keep\.txt/);
  expect(await readStackFile(page, 'default', 'notes/keep.txt')).toBeNull();

  // Back in the first stack, restored: all three come back, and what it was is kept first.
  await page.goto('/?stack=default');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(region(page, 'Table window: Invoices').locator('[data-row-id]').first().getByRole('cell').nth(1)).toHaveText('999');
  await openTimeline(page);
  await timeline(page).getByRole('listitem').first().getByRole('button', { name: 'Restore…' }).click();
  const reopened = page.waitForEvent('load', { timeout: 120_000 });
  await timeline(page).getByRole('button', { name: 'Restore', exact: true }).click();
  await expect(timeline(page).getByRole('alert')).toHaveCount(0);
  await reopened;
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 120_000 });
  await expect(region(page, 'Table window: Invoices').locator('[data-row-id]').first().getByRole('cell').nth(1)).toHaveText('120');
  expect(await readStackFile(page, 'default', 'notes/keep.txt')).toBe('keep me\n');
  await run(page, 'cat /root/system.txt; ls /workspace/notes', /original\s*keep\.txt/);
  await openTimeline(page);
  await expect(timeline(page).getByRole('listitem').first()).toContainText(/Before going back/);
});
