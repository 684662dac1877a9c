import { describe, expect, it } from 'vitest';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import { editText, formatCell, parseCell, visibleRows } from './table-model.ts';

const columns: TableColumn[] = [
  { key: 'vendor', label: 'Vendor', type: 'text' },
  { key: 'total', label: 'Total', type: 'currency', currency: 'EUR' },
  { key: 'paid', label: 'Paid', type: 'boolean' },
  { key: 'date', label: 'Date', type: 'date' },
];
const rows: TableRow[] = [
  { id: 'a', cells: { vendor: 'Globex', total: 99.5, paid: true, date: '2026-10-02' } },
  { id: 'b', cells: { vendor: 'ACME', total: null } },
  { id: 'c', cells: { vendor: 'Initech 10', total: 15 } },
  { id: 'd', cells: { vendor: 'Initech 9', total: 1200 } },
];

describe('table model', () => {
  it('formats typed cells', () => {
    expect(formatCell(1200, columns[1]!)).toMatch(/1,200\.00/);
    expect(formatCell(true, columns[2]!)).toBe('Yes');
    expect(formatCell(null, columns[0]!)).toBe('');
    // A calendar day is shown as that day in every time zone; what is not a date stays as it is.
    expect(formatCell('2026-10-02', columns[3]!)).toBe(new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' }).format(Date.UTC(2026, 9, 2)));
    expect(formatCell('soon', columns[3]!)).toBe('soon');
  });

  it('starts an editor from the stored value, which parses back to itself', () => {
    for (const [value, column] of [[1234.5, columns[1]!], [true, columns[2]!], [false, columns[2]!], ['2026-10-02', columns[3]!], ['x', columns[0]!]] as const) {
      expect(parseCell(editText(value, column), column)).toEqual({ value });
    }
    expect(editText(undefined, columns[0]!)).toBe('');
  });

  it('parses edits by column type, refusing what does not fit', () => {
    expect(parseCell(' 1,234.5 ', columns[1]!)).toEqual({ value: 1234.5 });
    expect(parseCell('€12', columns[1]!)).toEqual({ value: 12 });
    expect(parseCell('twelve', columns[1]!)).toEqual({ error: '"twelve" is not a number.' });
    expect(parseCell('yes', columns[2]!)).toEqual({ value: true });
    expect(parseCell('2026-02-30x', columns[3]!)).toEqual({ error: 'Use a date like 2026-10-31.' });
    expect(parseCell('2026-02-30', columns[3]!)).toEqual({ error: 'Use a date like 2026-10-31.' });
    expect(parseCell('2028-02-29', columns[3]!)).toEqual({ value: '2028-02-29' });
    expect(parseCell('', columns[0]!)).toEqual({ value: null });
  });

  it('sorts with empty cells last either way, text numerically aware, and filters on shown text', () => {
    const ids = (list: TableRow[]) => list.map((row) => row.id);
    expect(ids(visibleRows(rows, columns, '', { key: 'total', direction: 'asc' }))).toEqual(['c', 'a', 'd', 'b']);
    expect(ids(visibleRows(rows, columns, '', { key: 'total', direction: 'desc' }))).toEqual(['d', 'a', 'c', 'b']);
    expect(ids(visibleRows(rows, columns, '', { key: 'vendor', direction: 'asc' }))).toEqual(['b', 'a', 'd', 'c']);
    expect(ids(visibleRows(rows, columns, 'initech', null))).toEqual(['c', 'd']);
    expect(ids(visibleRows(rows, columns, 'yes', null))).toEqual(['a']);
    // Stored values match too: "2026-10" finds October whatever the shown date looks like.
    expect(ids(visibleRows(rows, columns, '2026-10', null))).toEqual(['a']);
  });
});
