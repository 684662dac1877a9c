// The canvas: windows of every kind that the user arranges (and a reload keeps), typed cell
// edits the agent hears of, the subbar, keyboard shortcuts, and accessibility.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from './test.ts';
import type { FakeScript } from '../../worker/agent/scripted/script.ts';
import { fakeState, loadScript } from './fake.ts';
import { assistant, openApp, send } from './app.ts';
import { putFile, removeFile } from './opfs.ts';
import { fixture } from '../support/fixtures.ts';

const ID = '{{tool_result:id: (w_[\\w-]+)}}';

/** The scripted agent opens one window of every kind (and a spare notes window to close). */
const everyKind: FakeScript = {
  name: 'every kind',
  turns: [
    {
      reply: {
        content: [
          {
            type: 'tool_use',
            name: 'create_window',
            input: {
              kind: 'table',
              title: 'Invoices',
              columns: [
                { key: 'vendor', label: 'Vendor' },
                { key: 'total', label: 'Total', type: 'currency', currency: 'EUR' },
                { key: 'paid', label: 'Paid', type: 'boolean' },
                { key: 'date', label: 'Date', type: 'date' },
              ],
              rows: [
                { vendor: 'ACME GMBH', total: 1200, paid: false, date: '2026-10-01' },
                { vendor: 'GLOBEX', total: 99.5, paid: true, date: '2026-10-02' },
                { vendor: 'INITECH', total: 15, paid: false, date: '2026-10-03' },
              ],
            },
          },
        ],
      },
    },
    {
      reply: {
        content: [
          { type: 'tool_use', name: 'create_window', input: { kind: 'chart', title: 'Totals', chart: 'bar', table_id: ID, x: 'vendor', y: ['total'] } },
          { type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Summary', content: '**3 invoices**, €1,314.50 in all.' } },
          { type: 'tool_use', name: 'create_window', input: { kind: 'document', title: 'Invoice A1', path: 'documents/plain-1.pdf' } },
          { type: 'tool_use', name: 'create_window', input: { kind: 'document', title: 'Scan', path: 'documents/scan.jpg' } },
          { type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Scratch', content: 'to be closed' } },
        ],
      },
    },
    { reply: { content: [{ type: 'text', text: 'Your windows are open.' }] } },
  ],
};

async function openEveryKind(page: Page): Promise<void> {
  await openApp(page);
  await putFile(page, 'stacks/default/documents/plain-1.pdf', fixture('plain-1.pdf'));
  await putFile(page, 'stacks/default/documents/scan.jpg', fixture('plain-1_scan.jpg'));
  await loadScript(everyKind);
  await send(page, 'show me everything');
  await expect(assistant(page).last()).toHaveText('Your windows are open.');
}

const region = (page: Page, name: string) => page.getByRole('region', { name });

async function drag(page: Page, from: { x: number; y: number }, by: { x: number; y: number }): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x + by.x, from.y + by.y, { steps: 10 });
  await page.mouse.up();
}

async function boxes(windows: Locator[]) {
  return Promise.all(windows.map(async (win) => ({ box: (await win.boundingBox())!, z: await win.evaluate((el) => getComputedStyle(el.closest('.react-flow__node')!).zIndex) })));
}

test('every kind of window: the user drags, resizes and closes; a reload and agent updates keep the layout exactly', async ({ page }) => {
  await openEveryKind(page);
  const table = region(page, 'Table window: Invoices');
  const chart = region(page, 'Chart window: Totals');
  const notes = region(page, 'Notes window: Summary');
  const pdf = region(page, 'Document window: Invoice A1');
  const scan = region(page, 'Document window: Scan');
  await expect(table.getByRole('cell', { name: '€1,200.00' })).toBeVisible();
  await expect(chart.getByRole('img', { name: 'bar chart: Totals' })).toBeVisible();
  await expect(notes.locator('strong')).toHaveText('3 invoices');
  await expect(pdf.getByRole('img', { name: 'Invoice A1, page 1' })).toBeVisible();
  await expect(scan.getByRole('img', { name: 'Scan' })).toBeVisible();
  // None of the windows the agent opened covers another.
  const placed = await Promise.all([table, chart, notes, pdf, scan].map(async (win) => (await win.boundingBox())!));
  for (const [i, a] of placed.entries()) {
    for (const b of placed.slice(i + 1)) expect(a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y).toBe(true);
  }

  // The user closes the spare window, moves the table over the chart, resizes the notes, pans.
  await region(page, 'Notes window: Scratch').getByRole('button', { name: 'Close Scratch' }).click();
  await expect(region(page, 'Notes window: Scratch')).toHaveCount(0);
  const title = (await table.locator('.window-titlebar').boundingBox())!;
  await drag(page, { x: title.x + 80, y: title.y + 12 }, { x: 180, y: 48 });
  await notes.click({ position: { x: 40, y: 60 } });
  const corner = (await notes.locator('.react-flow__resize-control.bottom.right').boundingBox())!;
  await drag(page, { x: corner.x + corner.width / 2, y: corner.y + corner.height / 2 }, { x: 96, y: 64 });
  const canvas = (await page.locator('.canvas').boundingBox())!;
  await drag(page, { x: canvas.x + canvas.width - 60, y: canvas.y + 20 }, { x: -40, y: -10 });
  const windows = [table, chart, notes, pdf, scan];
  const before = await boxes(windows);
  // The table was moved last, over the chart: it is drawn above it.
  expect(Number(before[0]!.z)).toBeGreaterThan(Number(before[1]!.z));
  expect(before[2]!.box.width).toBeGreaterThan(placed[2]!.width + 80);

  await page.reload();
  await expect(table.getByRole('cell', { name: '€1,200.00' })).toBeVisible();
  await expect(region(page, 'Notes window: Scratch')).toHaveCount(0);
  expect(await boxes(windows)).toEqual(before);

  // The agent changes every window's content; none of them moves or changes size.
  const ids = await Promise.all([table, chart, notes].map((win) => win.getAttribute('data-window-id')));
  await loadScript({
    name: 'updates',
    turns: [
      {
        reply: {
          content: [
            { type: 'tool_use', name: 'update_window', input: { window_id: ids[0], rows: [{ vendor: 'UMBRELLA', total: 480, paid: false, date: '2026-10-04' }] } },
            { type: 'tool_use', name: 'update_window', input: { window_id: ids[1], chart: 'line', title: 'Totals by vendor' } },
            { type: 'tool_use', name: 'update_window', input: { window_id: ids[2], content: '**4 invoices**, €1,794.50 in all.' } },
          ],
        },
      },
      { reply: { content: [{ type: 'text', text: 'Updated.' }] } },
    ],
  });
  await send(page, 'add Umbrella');
  await expect(assistant(page).last()).toHaveText('Updated.');
  const line = region(page, 'Chart window: Totals by vendor');
  await expect(line.getByRole('img', { name: 'line chart: Totals by vendor' })).toBeVisible();
  await expect(notes.locator('strong')).toHaveText('4 invoices');
  await expect(table.getByRole('cell', { name: 'UMBRELLA' })).toBeVisible();
  expect(await boxes([table, line, notes, pdf, scan])).toEqual(before);
  expect((await fakeState()).failures).toEqual([]);

  // A document whose file is gone says so, in its window.
  await removeFile(page, 'stacks/default/documents/scan.jpg');
  await page.reload();
  await expect(scan.getByRole('alert')).toHaveText('documents/scan.jpg could not be shown: There is no file at documents/scan.jpg.');
});

test('typed cell edits reach the agent as typed values, and the chart follows them', async ({ page }) => {
  await openEveryKind(page);
  const table = region(page, 'Table window: Invoices');
  const row = table.locator('[data-row-id]').filter({ hasText: 'INITECH' });
  const cell = (column: number) => row.getByRole('cell').nth(column);

  await cell(1).dblclick();
  await table.getByRole('textbox', { name: 'Total, row 3' }).fill('twelve');
  await table.getByRole('textbox', { name: 'Total, row 3' }).press('Enter');
  await expect(table.getByRole('alert')).toHaveText('Total: "twelve" is not a number.');
  await cell(1).dblclick();
  await table.getByRole('textbox', { name: 'Total, row 3' }).fill('€2,300.50');
  await table.getByRole('textbox', { name: 'Total, row 3' }).press('Enter');
  await expect(cell(1)).toHaveText('€2,300.50');
  await expect(cell(1)).toBeFocused();

  await cell(2).press('Enter');
  await table.getByRole('combobox', { name: 'Paid, row 3' }).selectOption('yes');
  await table.getByRole('combobox', { name: 'Paid, row 3' }).press('Enter');
  await expect(cell(2)).toHaveText('Yes');
  await cell(3).dblclick();
  await table.getByLabel('Date, row 3').fill('2026-11-05');
  await table.getByLabel('Date, row 3').press('Enter');
  await expect(cell(3)).toHaveText('Nov 5, 2026');
  // The chart draws the table, so it follows the edit (its numbers are also given as text).
  await expect(region(page, 'Chart window: Totals').locator('table')).toContainText('2300.5');

  await loadScript({ name: 'hears', turns: [{ reply: { content: [{ type: 'text', text: 'Noted.' }] } }] });
  await send(page, 'I fixed Initech');
  await expect(assistant(page).last()).toHaveText('Noted.');
  const { requests } = await fakeState();
  const messages = (requests.at(-1)!.body as { messages: { role: string; content: string | { type: string; text?: string }[] }[] }).messages;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : last.content.map((block) => block.text ?? '').join('\n');
  expect(text).toContain('column "Total" (total): 15 -> 2300.5.');
  expect(text).toContain('column "Paid" (paid): false -> true.');
  expect(text).toContain('column "Date" (date): "2026-10-03" -> "2026-11-05".');
  expect(text).toContain('I fixed Initech');
});

const twoWindows = {
  name: 'two windows',
  turns: [
    {
      reply: {
        content: [
          { type: 'tool_use' as const, name: 'create_window', input: { kind: 'notes', title: 'First', content: 'one' } },
          { type: 'tool_use' as const, name: 'create_window', input: { kind: 'table', title: 'Second', columns: [{ key: 'a', label: 'A' }], rows: [{ a: 'x' }] } },
        ],
      },
    },
    { reply: { content: [{ type: 'text' as const, text: 'Two windows.' }] } },
  ],
};

test('the subbar lists windows, focuses, closes, and adds a notes window the agent hears of', async ({ page }) => {
  await loadScript({
    ...twoWindows,
    turns: [...twoWindows.turns, { expect: { last_user_text: 'The user opened a new notes window "Untitled notes"' }, reply: { content: [{ type: 'text', text: 'I see your new window.' }] } }],
  });
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('open two');
  await page.getByRole('button', { name: 'Send' }).click();
  const bar = page.getByRole('navigation', { name: 'Windows' });
  await expect(bar.getByRole('button', { name: /^Show / })).toHaveText([/First/, /Second/]);
  await bar.getByRole('button', { name: 'Show Second' }).click();
  await expect(page.locator('.window--focused')).toHaveAttribute('aria-label', 'Table window: Second');
  await bar.getByRole('button', { name: 'Close First' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: First' })).toHaveCount(0);
  await bar.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Notes' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: Untitled notes' })).toBeVisible();
  await page.getByRole('textbox', { name: 'Message' }).fill('look');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('I see your new window.');
  expect((await fakeState()).failures).toEqual([]);
});

test('keyboard: Ctrl-K focuses the chat, Alt-] cycles windows, Esc stops a mission', async ({ page }) => {
  await loadScript({
    ...twoWindows,
    turns: [...twoWindows.turns, { reply: { content: [{ type: 'text', text: 'A slow answer that goes on and on and on for a long time' }], chunk_chars: 4, delay_ms: 150 } }],
  });
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('open two');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Two windows.');
  await page.locator('.canvas').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('Control+k');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeFocused();
  await page.keyboard.press('Alt+]');
  await expect(page.locator('.window--focused')).toHaveAttribute('aria-label', 'Notes window: First');
  await page.keyboard.press('Alt+]');
  await expect(page.locator('.window--focused')).toHaveAttribute('aria-label', 'Table window: Second');

  await page.getByRole('textbox', { name: 'Message' }).fill('talk');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('.msg--streaming')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Stopped.' })).toBeVisible();
});

test('the main screen with windows of every kind open has no serious or critical accessibility violations', async ({ page }) => {
  await openEveryKind(page);
  await expect(region(page, 'Document window: Invoice A1').getByRole('img', { name: 'Invoice A1, page 1' })).toBeVisible();
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
});

test('stacks are separate workspaces; the switcher creates and opens them', async ({ page }) => {
  await loadScript({
    name: 'stacks',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'Only in the first', content: 'x' } }] } },
      { reply: { content: [{ type: 'text', text: 'Done.' }] } },
    ],
  });
  await openApp(page);
  await page.getByRole('textbox', { name: 'Message' }).fill('note');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('region', { name: 'Notes window: Only in the first' })).toBeVisible();

  await page.getByRole('button', { name: 'Stack: My stack' }).click();
  await page.getByRole('region', { name: 'Stacks' }).getByRole('button', { name: 'New stack…' }).click();
  await page.getByRole('dialog', { name: 'New stack' }).getByRole('textbox', { name: 'Name' }).fill('Client work');
  await page.getByRole('dialog', { name: 'New stack' }).getByRole('button', { name: 'Create' }).click();
  await expect(page).toHaveURL(/\?stack=s-/);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await expect(page.getByRole('button', { name: 'Stack: Client work' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Notes window: Only in the first' })).toHaveCount(0);
  await expect(page.locator('[data-role=user]')).toHaveCount(0);

  await page.getByRole('button', { name: 'Stack: Client work' }).click();
  await page.getByRole('region', { name: 'Stacks' }).getByRole('button', { name: 'My stack', exact: true }).click();
  await expect(page).toHaveURL(/\?stack=default/);
  await expect(page.getByRole('region', { name: 'Notes window: Only in the first' })).toBeVisible();
});

test('the user edits a notes window; the text is kept and the agent hears of it', async ({ page }) => {
  await loadScript({
    name: 'notes edit',
    turns: [{ expect: { last_user_text: '- call ACME on Monday' }, reply: { content: [{ type: 'text', text: 'Noted your plan.' }] } }],
  });
  await openApp(page);
  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Notes' }).click();
  const notes = page.getByRole('region', { name: 'Notes window: Untitled notes' });
  // The window the user asked for opens where they look and stays there: a window that slid
  // away under the pointer (the view panning to it) once swallowed the click on Edit.
  const opened = (await notes.boundingBox())!;
  await expect(page.getByRole('navigation', { name: 'Windows' }).getByRole('button', { name: 'Show Untitled notes' })).toHaveAttribute('aria-current', 'true');
  await page.evaluate(() => new Promise((done) => setTimeout(done, 400))); // longer than a pan
  expect(await notes.boundingBox()).toEqual(opened);
  await notes.getByRole('button', { name: 'Edit Untitled notes' }).click();
  await notes.getByRole('textbox', { name: 'Markdown of Untitled notes' }).fill('# Plan\n\n- call ACME on Monday');
  await expect(notes.getByText('Saved')).toBeVisible();
  await notes.getByRole('button', { name: 'Done editing Untitled notes' }).click();
  await expect(notes.getByRole('heading', { name: 'Plan' })).toBeVisible();
  await page.reload();
  await expect(page.getByRole('region', { name: 'Notes window: Untitled notes' }).getByText('call ACME on Monday')).toBeVisible();
  await page.getByRole('textbox', { name: 'Message' }).fill('what is my plan?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Noted your plan.');
  expect((await fakeState()).failures).toEqual([]);
});
