// The invoice flow end to end with the fixture PDFs: upload three -> three document windows ->
// "extract all vendor data" -> a table fills as each is saved -> a correction updates its cell and
// is remembered -> reload -> all still there -> export CSV. The model is scripted; what it reads
// (the PDFs' text, through read_ocr) is asserted to carry each invoice's vendor and total.
import { readFileSync } from 'node:fs';
import Papa from 'papaparse';
import { expect, test } from './test.ts';
import { fakeState, loadScript } from './fake.ts';
import { fixture, formatAmount, invoice, type Invoice } from '../support/fixtures.ts';

// Three layouts, one of them German (umlauts in the vendor, `1.234,56` amounts).
const invoices = ['plain-1', 'two-column-1', 'german-1'].map(invoice);
type Truth = Invoice;

test('upload, extract, correct, reload, export: the invoice flow', async ({ page }) => {
  const fields = (t: Truth) => ({ vendor: t.vendor, invoice_number: t.invoice_number, date: t.date, currency: t.currency, subtotal: t.subtotal, tax: t.tax, total: t.total });
  const turns = invoices.flatMap((t, i) => [
    {
      ...(i === 0 ? { expect: { last_user_text: 'extract all vendor data' } } : {}),
      reply: { content: [{ type: 'tool_use' as const, name: 'read_ocr', input: { document: `${t.id}.pdf` } }] },
    },
    {
      // What the model read holds this invoice's vendor and total.
      expect: { tool_result: { contains: t.vendor } },
      reply: { content: [{ type: 'tool_use' as const, name: 'save_extraction', input: { document: `${t.id}.pdf`, fields: fields(t) } }] },
    },
  ]);
  const second = invoices[1]!;
  await loadScript({
    name: 'invoice flow',
    turns: [
      ...turns,
      { reply: { content: [{ type: 'text', text: 'All three are in the table.' }] } },
      {
        expect: { last_user_text: 'the vendor on the second one is wrong' },
        reply: { content: [{ type: 'tool_use', name: 'save_extraction', input: { document: `${second.id}.pdf`, fields: { vendor: 'NORTHWIND TRADERS' } } }] },
      },
      { expect: { tool_result: { contains: 'Updated the extraction' } }, reply: { content: [{ type: 'text', text: 'Fixed: NORTHWIND TRADERS.' }] } },
      {
        expect: { model: 'claude-haiku-5-5' },
        reply: { content: [{ type: 'text', text: `CORRECTION (1.0): The vendor of ${second.id}.pdf is NORTHWIND TRADERS, not ${second.vendor}.` }] },
      },
    ],
  });

  await page.goto('/');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  await page.getByLabel('Attach files').setInputFiles(invoices.map((t) => ({ name: `${t.id}.pdf`, mimeType: 'application/pdf', buffer: fixture(`${t.id}.pdf`) })));
  for (const t of invoices) {
    await expect(page.getByRole('region', { name: `Document window: ${t.id}.pdf` })).toBeVisible();
    await expect(page.locator('[data-role=notice]').filter({ hasText: `Read ${t.id}.pdf` })).toBeVisible();
  }

  await page.getByRole('textbox', { name: 'Message' }).fill('extract all vendor data');
  await page.getByRole('button', { name: 'Send' }).click();
  const table = page.getByRole('region', { name: 'Table window: Extracted data' });
  await expect(table).toBeVisible();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('All three are in the table.');
  await expect(table.locator('[data-row-id]')).toHaveCount(3);
  for (const t of invoices) await expect(table.getByRole('cell', { name: t.vendor })).toBeVisible();

  await page.getByRole('textbox', { name: 'Message' }).fill('the vendor on the second one is wrong, it is NORTHWIND TRADERS');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('[data-role=assistant]').last()).toHaveText('Fixed: NORTHWIND TRADERS.');
  await expect(table.getByRole('cell', { name: 'NORTHWIND TRADERS' })).toBeVisible();
  await expect(table.getByRole('cell', { name: second.vendor })).toHaveCount(0);

  // The correction is learned.
  // Learning reads finished turns: wait until the mission has ended.
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Learn now' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Learned' })).toContainText('Learned 1 thing');
  await page.getByRole('button', { name: 'Cancel' }).click();

  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
  const again = page.getByRole('region', { name: 'Table window: Extracted data' });
  await expect(again.locator('[data-row-id]')).toHaveCount(3);
  await expect(again.getByRole('cell', { name: 'NORTHWIND TRADERS' })).toBeVisible();
  for (const t of invoices) await expect(page.getByRole('region', { name: `Document window: ${t.id}.pdf` })).toBeVisible();

  const [file] = await Promise.all([page.waitForEvent('download'), again.getByRole('button', { name: 'Export Extracted data as CSV' }).click()]);
  const rows = Papa.parse<string[]>(readFileSync((await file.path())!, 'utf8').trim()).data;
  expect(rows[0]).toEqual(['Document', 'Vendor', 'Invoice number', 'Date', 'Currency', 'Subtotal', 'Tax', 'Total']);
  expect(rows.slice(1)).toEqual(
    invoices.map((t) => [`${t.id}.pdf`, t === second ? 'NORTHWIND TRADERS' : t.vendor, t.invoice_number, t.date, t.currency, String(t.subtotal), String(t.tax), String(t.total)]),
  );
  // Every invoice's vendor and total were in the text the model read.
  const state = await fakeState();
  expect(state.failures).toEqual([]);
  // Only what tools returned to the model (read_ocr's text), not what the script itself sent.
  type Block = { type: string; content?: unknown };
  const read = state.requests
    .flatMap((request) => ((request.body as { messages: { content: string | Block[] }[] }).messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
    .filter((block) => block.type === 'tool_result' && typeof block.content === 'string' && (block.content as string).startsWith('<document'))
    .map((block) => block.content as string)
    .join('\n');
  for (const t of invoices) {
    expect(read).toContain(t.vendor);
    expect(read).toContain(formatAmount(t, t.total));
  }
});
