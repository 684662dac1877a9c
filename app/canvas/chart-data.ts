// What a chart draws: labels and numeric series, from a table window (following its edits) or
// from the chart's own numbers. Pure, so it is unit tested.
import type { CanvasWindow, ChartWindow } from '../../protocol/windows.ts';

export interface ChartData {
  labels: string[];
  series: { name: string; values: (number | null)[] }[];
  /** ISO 4217 code when every series is money in that currency, so axes can say so. */
  currency?: string;
}

export type ChartInput = { ok: true; data: ChartData } | { ok: false; message: string };

export function chartData(chart: ChartWindow, windows: CanvasWindow[]): ChartInput {
  const source = chart.source;
  if (source.type === 'inline') return { ok: true, data: { labels: source.labels, series: source.series } };
  const table = windows.find((w) => w.id === source.table_id);
  if (!table || table.kind !== 'table') return { ok: false, message: `The table this chart draws (${source.table_id}) is closed.` };
  const columns = new Map(table.columns.map((column) => [column.key, column]));
  const missing = [source.x, ...source.y].filter((key) => !columns.has(key));
  if (missing.length) return { ok: false, message: `The table no longer has the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.` };
  const codes = new Set(source.y.map((key) => columns.get(key)!).map((column) => (column.type === 'currency' ? (column.currency ?? 'USD') : null)));
  const [code] = codes;
  return {
    ok: true,
    data: {
      ...(codes.size === 1 && code ? { currency: code } : {}),
      labels: table.rows.map((row) => String(row.cells[source.x] ?? '')),
      series: source.y.map((key) => ({
        name: columns.get(key)!.label,
        values: table.rows.map((row) => {
          const value = row.cells[key];
          return typeof value === 'number' ? value : typeof value === 'string' && value.trim() && Number.isFinite(Number(value)) ? Number(value) : null;
        }),
      })),
    },
  };
}
