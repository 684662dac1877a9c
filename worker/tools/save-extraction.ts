// save_extraction: one document's extracted fields, stored in memory.db's extractions table and
// shown as the document's row in a table window that fills as documents finish.
import { z } from 'zod';
import type { DocumentRecord, DocumentsStore } from '../../memory/index.ts';
import type { NewWindow } from '../canvas.ts';
import type { CanvasWindow, CellValue, TableColumn, WindowPatch } from '../../protocol/windows.ts';
import type { OcrWord } from '../documents/ocr.ts';
import { uncertainFields, UNSURE_BELOW } from '../documents/uncertain.ts';
import { defineTool } from './define-tool.ts';
import description from './save-extraction.md?raw';

const fieldValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const saveExtractionSchema = z.object({
  document: z.string().min(1).describe('The document: file name, path or id.'),
  fields: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'Field names are snake_case, e.g. invoice_number.'), fieldValue).describe('Field name -> value.'),
  confidence: z.record(z.string(), z.number().min(0).max(1)).optional().describe('Optional: field name -> 0..1.'),
  window_id: z.string().optional().describe('The table window to show it in; by default the "Extracted data" table.'),
});

export interface SaveExtractionOperations {
  findDocument(nameOrId: string): Promise<DocumentRecord | undefined>;
  documents: Pick<DocumentsStore, 'addExtraction' | 'updateExtraction' | 'latestExtraction'>;
  get(windowId: string): CanvasWindow | undefined;
  windows(): CanvasWindow[];
  openWindow(window: NewWindow): Promise<CanvasWindow>;
  patchWindow(windowId: string, patch: WindowPatch): Promise<CanvasWindow>;
  /** The words OCR read in the document, with their confidences; none when it was not OCR'd. */
  words?(documentId: string): Promise<OcrWord[]>;
}

const DEFAULT_TITLE = 'Extracted data';
const MONEY = /^(subtotal|tax|total|amount|vat|net|gross)(_|$)|_(amount|total|tax)$/;

export function createSaveExtractionTool(ops: SaveExtractionOperations) {
  return defineTool({
    name: 'save_extraction',
    description,
    schema: saveExtractionSchema,
    title: (input) => `Saving extracted data for ${input.document}`,
    async run(input) {
      const doc = await ops.findDocument(input.document);
      if (!doc) throw new Error(`No document "${input.document}". The attachment index lists the documents.`);
      const previous = await ops.documents.latestExtraction(doc.id);
      const fields = { ...(previous?.fields ?? {}), ...input.fields } as Record<string, CellValue>;
      const confidence = { ...(previous?.confidence ?? {}), ...(input.confidence ?? {}) };
      if (previous) await ops.documents.updateExtraction(previous.id, { fields, confidence, status: 'corrected' });
      else await ops.documents.addExtraction({ documentId: doc.id, fields, confidence, status: 'complete' });

      const table = await tableFor(ops, input.window_id, fields);
      const columns = mergeColumns(table.kind === 'table' ? table.columns : [], fields);
      if (table.kind === 'table' && columns.length !== table.columns.length) await ops.patchWindow(table.id, { op: 'set_columns', columns });
      // What OCR was unsure of (and what the model itself says it is unsure of) is marked for the user.
      const unsure = uncertainFields(fields, (await ops.words?.(doc.id).catch(() => [])) ?? []);
      for (const [key, share] of Object.entries(confidence)) {
        if (typeof share === 'number' && share * 100 < UNSURE_BELOW && key in fields) unsure[key] = Math.min(unsure[key] ?? 100, Math.round(share * 100));
      }
      await ops.patchWindow(table.id, { op: 'upsert_rows', rows: [{ id: doc.id, cells: { document: doc.filename, ...fields }, uncertain: unsure }] });
      const saved = `${previous ? 'Updated' : 'Saved'} the extraction for ${doc.filename} (${Object.keys(input.fields).join(', ')}); it is row ${doc.id} of table ${table.id}.`;
      const named = Object.entries(unsure).map(([key, percent]) => `${key} ${JSON.stringify(fields[key])} (${percent}% confidence)`);
      return named.length ? `${saved} OCR was unsure of: ${named.join(', ')}. These cells are marked in the table; say so when you report them.` : saved;
    },
  });
}

async function tableFor(ops: SaveExtractionOperations, windowId: string | undefined, fields: Record<string, CellValue>): Promise<CanvasWindow> {
  if (windowId) {
    const named = ops.get(windowId);
    if (!named || named.kind !== 'table') throw new Error(`"${windowId}" is not an open table window.`);
    return named;
  }
  const existing = ops.windows().find((w) => w.kind === 'table' && w.title === DEFAULT_TITLE);
  return existing ?? ops.openWindow({ kind: 'table', title: DEFAULT_TITLE, columns: mergeColumns([], fields), rows: [] });
}

/** The table's columns plus any new field, typed from its name and value. */
export function mergeColumns(columns: TableColumn[], fields: Record<string, CellValue>): TableColumn[] {
  const next = columns.length ? [...columns] : [{ key: 'document', label: 'Document', type: 'text' as const }];
  for (const [key, value] of Object.entries(fields)) {
    if (next.some((column) => column.key === key)) continue;
    const type: TableColumn['type'] =
      typeof value === 'number' ? (MONEY.test(key) ? 'currency' : 'number') : typeof value === 'boolean' ? 'boolean' : /date/.test(key) ? 'date' : 'text';
    const currency = type === 'currency' && typeof fields.currency === 'string' && /^[A-Za-z]{3}$/.test(fields.currency) ? fields.currency.toUpperCase() : undefined;
    next.push({ key, label: labelOf(key), type, ...(currency ? { currency } : {}) });
  }
  return next;
}

function labelOf(key: string): string {
  return key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
}
