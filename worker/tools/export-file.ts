// export_file: writes a table window as CSV, JSON or XLSX into artifacts/ and offers it to the
// user as a download.
import { z } from 'zod';
import { EXPORT_MIME, exportFileName, exportTable } from '../export/table-export.ts';
import type { CanvasWindow } from '../../protocol/windows.ts';
import type { UserFiles } from '../user-files.ts';
import { defineTool } from './define-tool.ts';

export const exportFileSchema = z.object({
  window_id: z.string().min(1).describe('The table window to export.'),
  format: z.enum(['csv', 'json', 'xlsx']).describe('csv, json (an array of objects) or xlsx (Excel).'),
  filename: z.string().max(120).optional().describe('File name without folder; defaults to the window title.'),
});

export interface ExportOperations {
  get(windowId: string): CanvasWindow | undefined;
  files: Pick<UserFiles, 'write'>;
  /** Tells the user a file is ready to download. */
  offerDownload(file: { path: string; mime: string; size: number }): void;
}

export function createExportFileTool(ops: ExportOperations) {
  return defineTool({
    name: 'export_file',
    description:
      'Export a table window to a file in artifacts/ (CSV, JSON or XLSX) and offer it to the user as a download. The file holds exactly what the table shows, including the user\'s edits.',
    schema: exportFileSchema,
    title: (input) => `Exporting ${ops.get(input.window_id)?.title ?? input.window_id} as ${input.format.toUpperCase()}`,
    async run(input) {
      const table = ops.get(input.window_id);
      if (!table || table.kind !== 'table') throw new Error(`"${input.window_id}" is not an open table window.`);
      const name = input.filename ? exportFileName(input.filename.replace(/\.(csv|json|xlsx)$/i, ''), input.format) : exportFileName(table.title, input.format);
      const bytes = await exportTable(table, input.format);
      const info = await ops.files.write(`artifacts/${name}`, bytes);
      ops.offerDownload({ path: info.path, mime: EXPORT_MIME[input.format], size: info.size });
      return `Exported ${table.rows.length} rows to ${info.path} (${info.size} bytes); the user can download it.`;
    },
  });
}
