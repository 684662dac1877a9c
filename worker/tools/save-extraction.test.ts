import { describe, expect, it } from 'vitest';
import { openTestMemory } from '../../memory/test-helpers.ts';
import { loadCanvas } from '../canvas.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import type { TableWindow } from '../../protocol/windows.ts';
import { createMemoryStorage } from '../../storage/json-files.ts';
import { createSaveExtractionTool, mergeColumns } from './save-extraction.ts';

const context = { signal: new AbortController().signal, tool_use_id: 't' };

async function setup() {
  const memory = await openTestMemory();
  const events: StackEventBody[] = [];
  let n = 0;
  const canvas = await loadCanvas(createMemoryStorage(), (e) => events.push(e), () => `w${++n}`);
  for (const name of ['a.pdf', 'b.pdf']) {
    await memory.documents.addDocument({ id: `doc_${name[0]}`, filename: name, path: `documents/${name}`, size: 1, mime: 'application/pdf', status: 'ready' });
  }
  const tool = createSaveExtractionTool({
    findDocument: async (name) => (await memory.documents.listDocuments()).find((d) => d.filename === name || d.id === name),
    documents: memory.documents,
    get: canvas.get,
    windows: canvas.windows,
    openWindow: canvas.openWindow,
    patchWindow: canvas.patchWindow,
  });
  return { memory, canvas, events, tool };
}

describe('save_extraction', () => {
  it('shows the model this schema', async () => {
    expect((await setup()).tool.spec).toMatchSnapshot();
  });

  it('stores fields and fills one table row per document; a correction updates the row in place', async () => {
    const { memory, canvas, tool } = await setup();
    const first = await tool.execute({ document: 'a.pdf', fields: { vendor: 'Acme', date: '2025-10-06', currency: 'eur', total: 12.5 } }, context);
    expect(first).toEqual({ content: 'Saved the extraction for a.pdf (vendor, date, currency, total); it is row doc_a of table w1.' });
    await tool.execute({ document: 'b.pdf', fields: { vendor: 'Globex', date: '2025-10-07', currency: 'eur', total: 7 } }, context);
    const table = canvas.get('w1') as TableWindow;
    expect(table.title).toBe('Extracted data');
    expect(table.columns.map((c) => [c.key, c.type, c.currency ?? null])).toEqual([
      ['document', 'text', null], ['vendor', 'text', null], ['date', 'date', null], ['currency', 'text', null], ['total', 'currency', 'EUR'],
    ]);
    expect(table.rows.map((r) => r.id)).toEqual(['doc_a', 'doc_b']);

    const fix = await tool.execute({ document: 'b.pdf', fields: { vendor: 'GLOBEX AG' } }, context);
    expect(fix.content).toMatch(/^Updated the extraction for b.pdf \(vendor\)/);
    const after = canvas.get('w1') as TableWindow;
    expect(after.rows.map((r) => r.cells.vendor)).toEqual(['Acme', 'GLOBEX AG']);
    expect(after.rows[1]!.cells.total).toBe(7);
    expect(await memory.documents.latestExtraction('doc_b')).toMatchObject({ status: 'corrected', fields: { vendor: 'GLOBEX AG', total: 7 } });
  });

  it('refuses an unknown document or a bad field name', async () => {
    const { tool } = await setup();
    expect((await tool.execute({ document: 'zzz.pdf', fields: { vendor: 'x' } }, context)).content).toContain('No document "zzz.pdf"');
    expect((await tool.execute({ document: 'a.pdf', fields: { 'Vendor Name': 'x' } }, context)).content).toContain('snake_case');
  });

  it('types new columns from names and values', () => {
    expect(mergeColumns([], { subtotal: 1, count: 2, paid: true, due_date: '2025-01-01' }).map((c) => c.type)).toEqual(['text', 'currency', 'number', 'boolean', 'date']);
  });
});
