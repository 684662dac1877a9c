// A table window as CSV, JSON or XLSX bytes: the one place exports are made, for the agent's
// export_file tool and the table window's export buttons alike.
import Papa from 'papaparse';
import type { Cell, SheetData } from 'write-excel-file/universal';
import type { CellValue, TableColumn, TableWindow } from '../../protocol/windows.ts';

export type ExportFormat = 'csv' | 'json' | 'xlsx';

export const EXPORT_MIME: Record<ExportFormat, string> = {
  csv: 'text/csv',
  json: 'application/json',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export async function exportTable(table: Pick<TableWindow, 'columns' | 'rows'>, format: ExportFormat): Promise<Uint8Array> {
  switch (format) {
    case 'csv':
      return new TextEncoder().encode(toCsv(table));
    case 'json':
      return new TextEncoder().encode(toJson(table));
    case 'xlsx':
      return toXlsx(table);
  }
}

/** Header row of labels, then one row per table row; empty cells stay empty. RFC 4180 quoting. */
export function toCsv(table: Pick<TableWindow, 'columns' | 'rows'>): string {
  const data = table.rows.map((row) => table.columns.map((column) => csvCell(row.cells[column.key])));
  return Papa.unparse({ fields: table.columns.map((column) => column.label), data }, { newline: '\r\n' });
}

function csvCell(value: CellValue | undefined): string | number | boolean {
  return value === null || value === undefined ? '' : value;
}

/** An array of objects keyed by column key, values as typed in the table. */
export function toJson(table: Pick<TableWindow, 'columns' | 'rows'>): string {
  const objects = table.rows.map((row) => Object.fromEntries(table.columns.map((column) => [column.key, row.cells[column.key] ?? null])));
  return `${JSON.stringify(objects, null, 2)}\n`;
}

async function toXlsx(table: Pick<TableWindow, 'columns' | 'rows'>): Promise<Uint8Array> {
  const header: Cell[] = table.columns.map((column) => ({ value: column.label, fontWeight: 'bold' }));
  const body: SheetData = table.rows.map((row) => table.columns.map((column) => xlsxCell(row.cells[column.key], column)));
  // Loaded by the first spreadsheet made, not with the stack.
  const { default: writeXlsxFile } = await import('write-excel-file/universal');
  const blob = await writeXlsxFile([header, ...body], { columns: table.columns.map(() => ({ width: 18 })) }).toBlob();
  return new Uint8Array(await blob.arrayBuffer());
}

function xlsxCell(value: CellValue | undefined, column: TableColumn): Cell {
  if (value === null || value === undefined || value === '') return null;
  if ((column.type === 'number' || column.type === 'currency') && typeof value === 'number') {
    return { value, type: Number, ...(column.type === 'currency' ? { format: '#,##0.00' } : {}) };
  }
  if (column.type === 'date' && typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return { value: new Date(`${value}T00:00:00Z`), type: Date, format: 'yyyy-mm-dd' };
  }
  if (typeof value === 'boolean') return { value, type: Boolean };
  return { value: String(value), type: String };
}

/** A file name from a title: letters, digits, dashes; never a path. */
export function exportFileName(title: string, format: ExportFormat): string {
  const base = title.normalize('NFKD').replace(/[^\w\s-]/g, '').trim().replace(/\s+/g, '-').slice(0, 80) || 'table';
  return `${base}.${format}`;
}
