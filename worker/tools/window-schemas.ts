// Schemas shared by the window tools: what a table column, a row and a chart look like to the model.
import { z } from 'zod';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';

export const cellValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const columnSchema = z.object({
  key: z.string().min(1).max(64).describe('Key of this column in each row object, e.g. "vendor".'),
  label: z.string().max(120).optional().describe('Header text; defaults to the key.'),
  type: z.enum(['text', 'number', 'currency', 'date', 'boolean']).optional().describe('Defaults to "text". Dates as YYYY-MM-DD.'),
  currency: z.string().length(3).optional().describe('ISO 4217 code for currency columns, e.g. "EUR".'),
});

export const rowsSchema = z
  .array(z.record(z.string(), cellValue))
  .max(10_000)
  .describe('Rows as objects keyed by column key. Give "id" to update an existing row (update_window); other rows are added.');

export const chartSchema = {
  chart: z.enum(['bar', 'line', 'pie']).optional().describe('Chart type (chart windows).'),
  table_id: z.string().optional().describe('Chart windows: the table window to draw; the chart follows its edits.'),
  x: z.string().optional().describe('Chart windows with table_id: the column key for labels.'),
  y: z.array(z.string()).max(8).optional().describe('Chart windows with table_id: numeric column keys to plot.'),
  labels: z.array(z.string()).max(1000).optional().describe('Chart windows without a table: the labels.'),
  series: z
    .array(z.object({ name: z.string(), values: z.array(z.number()) }))
    .max(8)
    .optional()
    .describe('Chart windows without a table: one or more series of numbers, one per label.'),
};

export function toColumns(input: z.infer<typeof columnSchema>[]): TableColumn[] {
  return input.map((column) => ({
    key: column.key,
    label: column.label ?? column.key,
    type: column.type ?? 'text',
    ...(column.currency ? { currency: column.currency.toUpperCase() } : {}),
  }));
}

/** Rows with the model's "id" kept; others get `r<n>` ids after the highest in `existing`. */
export function toRows(input: Record<string, z.infer<typeof cellValue>>[], existing: TableRow[]): TableRow[] {
  let next = 0;
  for (const row of existing) {
    const n = /^r(\d+)$/.exec(row.id);
    if (n) next = Math.max(next, Number(n[1]));
  }
  return input.map((row) => {
    const { id, ...cells } = row;
    return { id: id === undefined || id === null || id === '' ? `r${++next}` : String(id), cells };
  });
}

export function unknownColumnKeys(rows: TableRow[], columns: TableColumn[]): string[] {
  const known = new Set(columns.map((column) => column.key));
  const unknown = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row.cells)) if (!known.has(key)) unknown.add(key);
  return [...unknown];
}
