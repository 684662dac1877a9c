import Papa from 'papaparse';
import { unzipSync, strFromU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import type { TableWindow } from '../../protocol/windows.ts';
import { exportFileName, exportTable, toCsv, toJson } from './table-export.ts';

const table: Pick<TableWindow, 'columns' | 'rows'> = {
  columns: [
    { key: 'vendor', label: 'Vendor', type: 'text' },
    { key: 'date', label: 'Date', type: 'date' },
    { key: 'total', label: 'Total', type: 'currency', currency: 'EUR' },
    { key: 'paid', label: 'Paid', type: 'boolean' },
  ],
  rows: [
    { id: 'r1', cells: { vendor: 'ACME, "Ltd"', date: '2026-10-01', total: 1234.5, paid: true } },
    { id: 'r2', cells: { vendor: 'Line\nbreak', date: null, total: 0, paid: false } },
    { id: 'r3', cells: { vendor: 'Ümlaut GmbH' } },
  ],
};

describe('table export', () => {
  it('CSV is exactly the data, quoted where needed, and parses back', () => {
    const csv = toCsv(table);
    expect(csv.split('\r\n')[0]).toBe('Vendor,Date,Total,Paid');
    expect(csv).toContain('"ACME, ""Ltd"""');
    const parsed = Papa.parse<string[]>(csv, { skipEmptyLines: true }).data;
    expect(parsed).toEqual([
      ['Vendor', 'Date', 'Total', 'Paid'],
      ['ACME, "Ltd"', '2026-10-01', '1234.5', 'true'],
      ['Line\nbreak', '', '0', 'false'],
      ['Ümlaut GmbH', '', '', ''],
    ]);
  });

  it('JSON keeps types and nulls, keyed by column', () => {
    expect(JSON.parse(toJson(table))).toEqual([
      { vendor: 'ACME, "Ltd"', date: '2026-10-01', total: 1234.5, paid: true },
      { vendor: 'Line\nbreak', date: null, total: 0, paid: false },
      { vendor: 'Ümlaut GmbH', date: null, total: null, paid: null },
    ]);
  });

  it('XLSX is a workbook whose sheet holds the values', async () => {
    const bytes = await exportTable(table, 'xlsx');
    const files = unzipSync(bytes);
    expect(Object.keys(files)).toContain('xl/worksheets/sheet1.xml');
    const sheet = strFromU8(files['xl/worksheets/sheet1.xml']!);
    const strings = strFromU8(files['xl/sharedStrings.xml'] ?? new Uint8Array());
    expect(sheet + strings).toContain('Ümlaut GmbH');
    expect(sheet).toContain('<v>1234.5</v>');
  });

  it('names files safely from titles', () => {
    expect(exportFileName('Invoices Q3 / 2026', 'csv')).toBe('Invoices-Q3-2026.csv');
    expect(exportFileName('../../etc', 'json')).toBe('etc.json');
    expect(exportFileName('???', 'xlsx')).toBe('table.xlsx');
  });
});
