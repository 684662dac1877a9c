// Office documents: a workbook's sheets as CSVs and table windows, a Word document as markdown.
import Papa from 'papaparse';
import type { DocumentRecord } from '../../memory/index.ts';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import { readDocx, readWorkbook, type Sheet } from './office.ts';
import { assemble } from './pdf-text.ts';
import { failed, pageArtifactPath, type ReadingContext } from './reading.ts';

/** A sheet longer than this gets its CSV only: a table window holds every row in the stack's events. */
export const MAX_TABLE_WINDOW_ROWS = 5_000;

/** Each sheet as a CSV beside the workbook and a table window; the text is every sheet's CSV. */
export async function readXlsx(ctx: ReadingContext, record: DocumentRecord) {
  const { deps } = ctx;
  await ctx.update(record.id, { status: 'processing' });
  try {
    const sheets = await readWorkbook(await deps.files.read(record.path));
    const folder = `${record.path}.sheets`;
    const pages: string[] = [];
    const said: string[] = [];
    for (const [i, sheet] of sheets.entries()) {
      const csv = Papa.unparse(sheet.rows.map((row) => row.map((cell) => cell ?? '')));
      const path = `${folder}/${sheetFileName(sheet.name, i)}.csv`;
      await deps.files.write(path, csv);
      await deps.files.write(pageArtifactPath(record.id, i + 1), `Sheet "${sheet.name}" (/workspace/${path}):\n${csv}`);
      pages.push(`Sheet "${sheet.name}" (/workspace/${path}):\n${csv}`);
      const size = `${sheet.rows.length} × ${sheet.rows[0]?.length ?? 0}`;
      if (deps.openTable && sheet.rows.length > 0 && sheet.rows.length <= MAX_TABLE_WINDOW_ROWS + 1) {
        const { columns, rows } = tableOf(sheet);
        await deps.openTable(`${record.filename}: ${sheet.name}`, columns, rows);
        said.push(`${sheet.name} (${size})`);
      } else said.push(`${sheet.name} (${size}${sheet.rows.length > MAX_TABLE_WINDOW_ROWS + 1 ? ', CSV only' : ''})`);
      deps.emit({ type: 'document_progress', document_id: record.id, page: i + 1, pages: sheets.length });
    }
    await deps.files.write(`${record.path}.txt`, assemble({ pages }));
    const count = `${sheets.length} sheet${sheets.length === 1 ? '' : 's'}`;
    await ctx.update(record.id, { status: 'ready', pageCount: sheets.length, description: `Excel workbook "${record.filename}", ${count}: ${said.join(', ')}; each as a CSV in /workspace/${folder}/`, error: null });
  } catch (error) {
    await failed(ctx, record, error);
  }
}

/** The document as markdown: headings, lists and tables kept. */
export async function readWord(ctx: ReadingContext, record: DocumentRecord) {
  const { deps } = ctx;
  await ctx.update(record.id, { status: 'processing' });
  try {
    const { text } = await readDocx(await deps.files.read(record.path));
    if (!text.trim()) {
      await ctx.update(record.id, { status: 'failed', error: `${record.filename}: no text was found in the document.` });
      return;
    }
    await deps.files.write(pageArtifactPath(record.id, 1), text);
    await deps.files.write(`${record.path}.txt`, text);
    const words = text.split(/\s+/).filter((word) => /\w/.test(word)).length;
    const first = text.split('\n').map((line) => line.replace(/^#+\s*/, '').trim()).find((line) => line.length > 3) ?? '';
    await ctx.update(record.id, { status: 'ready', pageCount: 1, description: `Word document "${record.filename}", ${words} words${first ? `, begins "${first.slice(0, 80)}"` : ''}`, error: null });
  } catch (error) {
    await failed(ctx, record, error);
  }
}

/** A sheet's name as a file name in its folder (never empty, nothing a path could be made of). */
function sheetFileName(name: string, index: number): string {
  const clean = name.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '-').replace(/^\.+/, '').trim();
  return clean || `Sheet ${index + 1}`;
}

/**
 * A sheet as a table window: its first row names the columns when it is all text, and each
 * column is typed by its values (numbers, booleans, ISO dates, else text).
 */
export function tableOf(sheet: Sheet): { columns: TableColumn[]; rows: TableRow[] } {
  const width = sheet.rows[0]?.length ?? 0;
  const header = sheet.rows[0]?.every((cell) => typeof cell === 'string' && cell.trim() !== '') ? sheet.rows[0] : null;
  const body = header ? sheet.rows.slice(1) : sheet.rows;
  const used = new Set<string>();
  const columns: TableColumn[] = Array.from({ length: width }, (_, i) => {
    const label = header ? String(header[i]) : `Column ${i + 1}`;
    let key = label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '') || `column_${i + 1}`;
    while (used.has(key)) key = `${key}_${i + 1}`;
    used.add(key);
    const values = body.map((row) => row[i]).filter((value) => value !== null && value !== undefined && value !== '');
    const type = values.length && values.every((v) => typeof v === 'number') ? 'number' : values.length && values.every((v) => typeof v === 'boolean') ? 'boolean' : values.length && values.every((v) => typeof v === 'string' && /^\d{4}-\d\d-\d\d$/.test(v)) ? 'date' : 'text';
    return { key, label, type };
  });
  const rows: TableRow[] = body.map((row, r) => ({ id: `r${r + 1}`, cells: Object.fromEntries(columns.map((column, i) => [column.key, row[i] ?? null])) }));
  return { columns, rows };
}
