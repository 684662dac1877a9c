// Documents as people have them, on the production build: an Excel workbook with two sheets
// becomes two tables (and a CSV each in /workspace), a Word document becomes readable text with its
// headings and table, a three-page TIFF scan is read by OCR page by page, and a password-protected
// workbook is refused saying so. The fixtures come from tests/fixtures/office.ts.
import { expect, test } from './test.ts';
import { openApp } from './app.ts';
import { fixture, invoices as allInvoices } from '../support/fixtures.ts';
import { OFFICE_FILES } from '../fixtures/office.ts';

test('a workbook becomes two tables, a Word file readable text, a TIFF scan is read page by page; a locked workbook is refused', async ({ page }) => {
  test.setTimeout(4 * 60_000);
  await openApp(page);
  const notice = (text: string) => page.locator('[data-role=notice]').filter({ hasText: text });
  const attach = (name: string, mimeType: string) => page.getByLabel('Attach files').setInputFiles([{ name, mimeType, buffer: fixture(name) }]);

  await attach(OFFICE_FILES.workbook, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  await expect(notice(`Read ${OFFICE_FILES.workbook}: 2 sheets, each a table and a CSV.`)).toBeVisible({ timeout: 30_000 });
  const invoices = page.getByRole('region', { name: `Table window: ${OFFICE_FILES.workbook}: Invoices` });
  const payments = page.getByRole('region', { name: `Table window: ${OFFICE_FILES.workbook}: Payments` });
  await expect(invoices.getByRole('cell', { name: 'Müller & Söhne GmbH' })).toBeVisible();
  await expect(invoices.getByRole('columnheader', { name: /Total \(EUR\)/ })).toBeVisible();
  await expect(payments.getByRole('cell', { name: 'Café Lumière SARL' })).toBeVisible();

  await attach(OFFICE_FILES.report, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  await expect(notice(`Read ${OFFICE_FILES.report}: its text, headings and tables.`)).toBeVisible({ timeout: 30_000 });
  const report = page.getByRole('region', { name: `Document window: ${OFFICE_FILES.report}` });
  await expect(report.getByRole('heading', { name: 'Quarterly report', level: 1 })).toBeVisible();
  await expect(report.getByRole('table')).toContainText('1.234,56 €');
  await expect(report.getByRole('listitem').filter({ hasText: 'Pay before the 30th' })).toBeVisible();

  await attach(OFFICE_FILES.tiff, 'image/tiff');
  // Page by page: the progress line moves through the pages, then the text of all three.
  await expect(notice('Reading a document: 1 of 3 pages read…').or(notice('Reading a document: 2 of 3 pages read…')).or(notice(`Read ${OFFICE_FILES.tiff}`))).toBeVisible({ timeout: 60_000 });
  await expect(notice(`Read ${OFFICE_FILES.tiff}: 3 pages of text.`)).toBeVisible({ timeout: 120_000 });
  const scan = page.getByRole('region', { name: `Document window: ${OFFICE_FILES.tiff}` });
  await expect(scan.locator('pre')).toContainText('--- page 3 ---');
  // What OCR read on each page: the vendors of the three scanned invoices, in order.
  const text = (await scan.locator('pre').textContent()) ?? '';
  const pages = text.split(/--- page \d+ ---/).slice(1);
  expect(pages.map((page, i) => page.toLowerCase().includes(allInvoices()[i]!.vendor.toLowerCase()))).toEqual([true, true, true]);

  await page.getByLabel('Attach files').setInputFiles([{ name: 'budget.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: fixture(OFFICE_FILES.encrypted) }]);
  await expect(page.getByRole('alert').filter({ hasText: 'budget.xlsx is password-protected (encrypted), so it cannot be read here.' })).toBeVisible();
});
