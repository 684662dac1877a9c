// update_window: changes a window's content; never its place or size (those are the user's).
import { z } from 'zod';
import type { CanvasWindow, WindowPatch } from '../../protocol/windows.ts';
import { chartSource, type WindowOperations } from './create-window.ts';
import { defineTool } from './define-tool.ts';
import description from './update-window.md?raw';
import { chartSchema, columnSchema, rowsSchema, toColumns, toRows, unknownColumnKeys } from './window-schemas.ts';

export const updateWindowSchema = z.object({
  window_id: z.string().min(1).describe('The id create_window returned.'),
  title: z.string().trim().min(1).max(120).optional(),
  content: z.string().max(200_000).optional().describe('Notes windows: the new Markdown.'),
  columns: z.array(columnSchema).min(1).max(64).optional().describe('Table windows: replaces the columns.'),
  rows: rowsSchema.optional(),
  delete_row_ids: z.array(z.string()).max(10_000).optional().describe('Table windows: rows to remove.'),
  ...chartSchema,
});

export interface UpdateWindowOperations extends Pick<WindowOperations, 'get'> {
  patchWindow(windowId: string, patch: WindowPatch): Promise<CanvasWindow>;
}

export function createUpdateWindowTool(ops: UpdateWindowOperations) {
  return defineTool({
    name: 'update_window',
    description,
    schema: updateWindowSchema,
    title: (input) => `Updating window ${ops.get(input.window_id)?.title ?? input.window_id}`,
    async run(input) {
      const win = ops.get(input.window_id);
      if (!win) throw new Error(`No window with id "${input.window_id}" is open.`);
      const patches = toPatches(input, win, ops);
      if (patches.length === 0) throw new Error('Nothing to change: give a title, content, rows, columns or chart fields.');
      let current = win;
      for (const patch of patches) current = await ops.patchWindow(win.id, patch);
      return `Updated ${current.kind} window "${current.title}" (${current.id})${current.kind === 'table' ? `: ${current.rows.length} rows` : ''}.`;
    },
  });
}

function toPatches(input: z.infer<typeof updateWindowSchema>, win: CanvasWindow, ops: Pick<WindowOperations, 'get'>): WindowPatch[] {
  const patches: WindowPatch[] = [];
  const set: Extract<WindowPatch, { op: 'set' }> = { op: 'set' };
  if (input.title !== undefined) set.title = input.title;
  if (input.content !== undefined) {
    if (win.kind !== 'notes') throw new Error(`"content" is for notes windows; ${win.id} is a ${win.kind} window.`);
    set.content = input.content;
  }
  const chartFields = input.table_id !== undefined || input.labels !== undefined || input.series !== undefined;
  if (input.chart !== undefined || chartFields) {
    if (win.kind !== 'chart') throw new Error(`Chart fields are for chart windows; ${win.id} is a ${win.kind} window.`);
    if (input.chart !== undefined) set.chart = input.chart;
    if (chartFields) set.source = chartSource(input, ops);
  }
  if (Object.keys(set).length > 1) patches.push(set);

  const tableFields = input.columns !== undefined || input.rows !== undefined || input.delete_row_ids !== undefined;
  if (tableFields && win.kind !== 'table') throw new Error(`Rows and columns are for table windows; ${win.id} is a ${win.kind} window.`);
  if (win.kind === 'table') {
    const columns = input.columns ? toColumns(input.columns) : win.columns;
    if (input.columns) patches.push({ op: 'set_columns', columns });
    if (input.delete_row_ids?.length) patches.push({ op: 'delete_rows', row_ids: input.delete_row_ids });
    if (input.rows?.length) {
      const rows = toRows(input.rows, win.rows);
      const unknown = unknownColumnKeys(rows, columns);
      if (unknown.length) throw new Error(`Rows use keys that are not columns: ${unknown.join(', ')}.`);
      patches.push({ op: 'upsert_rows', rows });
    }
  }
  return patches;
}
