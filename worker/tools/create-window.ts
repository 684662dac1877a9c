// create_window: opens a window on the canvas. The agent owns its content; the user its geometry.
import { z } from 'zod';
import type { NewWindow } from '../canvas.ts';
import type { CanvasWindow } from '../../protocol/windows.ts';
import description from './create-window.md?raw';
import { defineTool } from './define-tool.ts';
import { chartSchema, columnSchema, rowsSchema, toColumns, toRows, unknownColumnKeys } from './window-schemas.ts';

export const createWindowSchema = z.object({
  kind: z.enum(['notes', 'table', 'chart', 'document']).describe('The window type.'),
  title: z.string().trim().min(1).max(120).describe('A short title for the window.'),
  content: z.string().max(200_000).optional().describe('Notes windows: the content, as Markdown.'),
  columns: z.array(columnSchema).min(1).max(64).optional().describe('Table windows: the columns, in order.'),
  rows: rowsSchema.optional(),
  ...chartSchema,
  path: z.string().max(500).optional().describe('Document windows: the file, relative to the user space.'),
});

export type CreateWindowInput = z.infer<typeof createWindowSchema>;

/** What the tool needs from the stack; injected so the tool is tested without a worker. */
export interface WindowOperations {
  openWindow(window: NewWindow): Promise<CanvasWindow>;
  get(windowId: string): CanvasWindow | undefined;
  /** The MIME type of a file in user space, or null when there is no such file. */
  fileType(path: string): Promise<string | null>;
}

export function createCreateWindowTool(ops: WindowOperations) {
  return defineTool({
    name: 'create_window',
    description,
    schema: createWindowSchema,
    title: (input) => `Opening a ${input.kind} window: ${input.title}`,
    async run(input) {
      const opened = await ops.openWindow(await toNewWindow(input, ops));
      return `Opened ${opened.kind} window "${opened.title}" (id: ${opened.id}).`;
    },
  });
}

async function toNewWindow(input: CreateWindowInput, ops: WindowOperations): Promise<NewWindow> {
  const { title } = input;
  switch (input.kind) {
    case 'notes':
      if (input.content === undefined) throw new Error('A notes window needs "content" (Markdown).');
      return { kind: 'notes', title, content: input.content };
    case 'table': {
      if (!input.columns) throw new Error('A table window needs "columns".');
      const columns = toColumns(input.columns);
      const rows = toRows(input.rows ?? [], []);
      const unknown = unknownColumnKeys(rows, columns);
      if (unknown.length) throw new Error(`Rows use keys that are not columns: ${unknown.join(', ')}. Add them to "columns" or drop them.`);
      return { kind: 'table', title, columns, rows };
    }
    case 'chart':
      return { kind: 'chart', title, chart: input.chart ?? 'bar', source: chartSource(input, ops) };
    case 'document': {
      if (!input.path) throw new Error('A document window needs "path", e.g. "documents/invoice.pdf".');
      const mime = await ops.fileType(input.path);
      if (mime === null) throw new Error(`There is no file at "${input.path}" in the user space.`);
      return { kind: 'document', title, path: input.path, mime };
    }
  }
}

export function chartSource(input: Pick<CreateWindowInput, 'table_id' | 'x' | 'y' | 'labels' | 'series'>, ops: Pick<WindowOperations, 'get'>) {
  if (input.table_id) {
    const table = ops.get(input.table_id);
    if (!table || table.kind !== 'table') throw new Error(`"${input.table_id}" is not an open table window.`);
    const keys = new Set(table.columns.map((c) => c.key));
    if (!input.x || !keys.has(input.x)) throw new Error(`"x" must be a column of ${table.id}: ${[...keys].join(', ')}.`);
    const y = input.y ?? [];
    const numeric = new Set(table.columns.filter((c) => c.type === 'number' || c.type === 'currency').map((c) => c.key));
    if (y.length === 0 || y.some((key) => !numeric.has(key))) {
      throw new Error(`"y" must list numeric columns of ${table.id}: ${[...numeric].join(', ') || 'it has none'}.`);
    }
    return { type: 'table' as const, table_id: table.id, x: input.x, y };
  }
  if (!input.labels || !input.series?.length) throw new Error('A chart needs either "table_id", "x" and "y", or "labels" and "series".');
  const bad = input.series.find((s) => s.values.length !== input.labels!.length);
  if (bad) throw new Error(`Series "${bad.name}" has ${bad.values.length} values for ${input.labels.length} labels.`);
  return { type: 'inline' as const, labels: input.labels, series: input.series };
}
