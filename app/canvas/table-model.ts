// Pure table logic for the table window: typed display, parsing edits, sorting and filtering.
import type { CellValue, TableColumn, TableRow } from '../../protocol/windows.ts';

export type SortState = { key: string; direction: 'asc' | 'desc' } | null;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// Dates are calendar days, not instants: shown in UTC so no time zone moves them a day.
const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

export function formatCell(value: CellValue | undefined, column: TableColumn): string {
  if (value === null || value === undefined || value === '') return '';
  switch (column.type) {
    case 'currency':
      if (typeof value === 'number') {
        try {
          return new Intl.NumberFormat(undefined, { style: 'currency', currency: column.currency ?? 'USD' }).format(value);
        } catch {
          return value.toFixed(2);
        }
      }
      return String(value);
    case 'number':
      return typeof value === 'number' ? new Intl.NumberFormat().format(value) : String(value);
    case 'boolean':
      return value === true ? 'Yes' : value === false ? 'No' : String(value);
    case 'date':
      return typeof value === 'string' && ISO_DATE.test(value) ? DATE_FORMAT.format(new Date(`${value}T00:00:00Z`)) : String(value);
    default:
      return String(value);
  }
}

/** What the user typed, as the column's type; an error message when it does not fit. */
export function parseCell(text: string, column: TableColumn): { value: CellValue } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  switch (column.type) {
    case 'number':
    case 'currency': {
      // A leading currency sign and thousands separators are fine; letters are not.
      const bare = trimmed.replace(/^[^\p{L}\d+.-]+/u, '').replace(/[\s,]/g, '');
      const number = /\d/.test(bare) ? Number(bare) : Number.NaN;
      return Number.isFinite(number) ? { value: number } : { error: `"${trimmed}" is not a number.` };
    }
    case 'boolean':
      if (/^(yes|true|1|y)$/i.test(trimmed)) return { value: true };
      if (/^(no|false|0|n)$/i.test(trimmed)) return { value: false };
      return { error: 'Type yes or no.' };
    case 'date':
      return isCalendarDate(trimmed) ? { value: trimmed } : { error: 'Use a date like 2026-10-31.' };
    default:
      return { value: trimmed };
  }
}

/** A real day of the calendar as YYYY-MM-DD (2026-02-30 is not one). */
function isCalendarDate(text: string): boolean {
  if (!ISO_DATE.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** The text an editor starts from: the value as stored, which is what parseCell reads back. */
export function editText(value: CellValue | undefined, column: TableColumn): string {
  if (value === null || value === undefined) return '';
  if (column.type === 'boolean' && typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}

/**
 * The rows to show: those matching `filter` (case-insensitive, against the shown text or the
 * stored value, so "2026-10" finds October dates), sorted by `sort`.
 */
export function visibleRows(rows: TableRow[], columns: TableColumn[], filter: string, sort: SortState): TableRow[] {
  const needle = filter.trim().toLowerCase();
  const matches = (row: TableRow) =>
    columns.some((column) => {
      const value = row.cells[column.key];
      return formatCell(value, column).toLowerCase().includes(needle) || (value !== null && value !== undefined && String(value).toLowerCase().includes(needle));
    });
  const filtered = needle ? rows.filter(matches) : rows;
  if (!sort) return filtered;
  const factor = sort.direction === 'asc' ? 1 : -1;
  return [...filtered].sort((a, b) => {
    const x = a.cells[sort.key];
    const y = b.cells[sort.key];
    // Empty cells stay last whichever way the column is sorted.
    if (isEmpty(x) || isEmpty(y)) return isEmpty(x) === isEmpty(y) ? 0 : isEmpty(x) ? 1 : -1;
    return factor * compare(x!, y!);
  });
}

const isEmpty = (value: CellValue | undefined) => value === null || value === undefined || value === '';

/** Numbers by value; everything else as text, numerically aware. */
function compare(a: CellValue, b: CellValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}
