import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadCanvas } from '../canvas.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import type { TableWindow } from '../../protocol/windows.ts';
import { createMemoryStorage } from '../../storage/json-files.ts';
import { createMemoryUserFiles } from '../user-files.ts';
import { createCloseWindowTool } from './close-window.ts';
import { createCreateWindowTool } from './create-window.ts';
import { MAX_TOOL_OUTPUT_CHARS, defineTool } from './define-tool.ts';
import { createUpdateWindowTool } from './update-window.ts';

const context = { signal: new AbortController().signal, tool_use_id: 't' };

async function setup() {
  const events: StackEventBody[] = [];
  let n = 0;
  const canvas = await loadCanvas(createMemoryStorage(), (e) => events.push(e), () => `w${++n}`, () => 1000);
  const files = createMemoryUserFiles({ 'documents/a.pdf': new TextEncoder().encode('%PDF-1.7 ...') });
  const fileType = async (path: string) => (await files.stat(path))?.mime ?? null;
  return {
    canvas,
    events,
    create: createCreateWindowTool({ openWindow: canvas.openWindow, get: canvas.get, fileType }),
    update: createUpdateWindowTool(canvas),
    close: createCloseWindowTool(canvas),
  };
}

const invoices = {
  kind: 'table',
  title: 'Invoices',
  columns: [{ key: 'vendor', label: 'Vendor' }, { key: 'total', type: 'currency', currency: 'eur' }],
  rows: [{ vendor: 'ACME', total: 12.5 }, { id: 'inv-2', vendor: 'Globex', total: 99 }],
};

describe('window tool schemas', () => {
  it('show the model these schemas', async () => {
    // What the model sees: a change here changes the agent's behaviour, so it is reviewed.
    const { create, update, close } = await setup();
    expect([create.spec, update.spec, close.spec]).toMatchSnapshot();
  });
});

describe('create_window', () => {
  it('opens a notes window', async () => {
    const { create, canvas } = await setup();
    expect(await create.execute({ kind: 'notes', title: '  Plan ', content: '- a' }, context)).toEqual({ content: 'Opened notes window "Plan" (id: w1).' });
    expect(canvas.get('w1')).toMatchObject({ kind: 'notes', title: 'Plan', content: '- a' });
    expect(create.title({ kind: 'notes', title: 'Plan', content: '' })).toBe('Opening a notes window: Plan');
  });

  it('opens a table with typed columns and stable row ids', async () => {
    const { create, canvas } = await setup();
    await create.execute(invoices, context);
    expect(canvas.get('w1')).toMatchObject({
      columns: [
        { key: 'vendor', label: 'Vendor', type: 'text' },
        { key: 'total', label: 'total', type: 'currency', currency: 'EUR' },
      ],
      rows: [
        { id: 'r1', cells: { vendor: 'ACME', total: 12.5 } },
        { id: 'inv-2', cells: { vendor: 'Globex', total: 99 } },
      ],
    });
  });

  it('refuses rows with keys that are not columns', async () => {
    const { create } = await setup();
    const result = await create.execute({ ...invoices, rows: [{ vendr: 'x' }] }, context);
    expect(result).toEqual({ is_error: true, content: 'create_window failed: Rows use keys that are not columns: vendr. Add them to "columns" or drop them.' });
  });

  it('opens a chart of a table, checking its columns', async () => {
    const { create, canvas } = await setup();
    await create.execute(invoices, context);
    expect((await create.execute({ kind: 'chart', title: 'By vendor', table_id: 'w1', x: 'vendor', y: ['vendor'] }, context)).content).toContain('"y" must list numeric columns of w1: total');
    await create.execute({ kind: 'chart', title: 'By vendor', chart: 'pie', table_id: 'w1', x: 'vendor', y: ['total'] }, context);
    expect(canvas.get('w2')).toMatchObject({ kind: 'chart', chart: 'pie', source: { type: 'table', table_id: 'w1', x: 'vendor', y: ['total'] } });
  });

  it('checks an inline chart has a value per label', async () => {
    const { create } = await setup();
    const result = await create.execute({ kind: 'chart', title: 'c', labels: ['a', 'b'], series: [{ name: 's', values: [1] }] }, context);
    expect(result.content).toContain('Series "s" has 1 values for 2 labels.');
  });

  it('opens a document only for a file that exists, typed by its bytes', async () => {
    const { create, canvas } = await setup();
    expect((await create.execute({ kind: 'document', title: 'x', path: 'documents/missing.pdf' }, context)).content).toContain('There is no file at "documents/missing.pdf"');
    expect((await create.execute({ kind: 'document', title: 'x', path: '../etc/passwd' }, context)).content).toContain('may not use ".."');
    await create.execute({ kind: 'document', title: 'Invoice', path: 'documents/a.pdf' }, context);
    expect(canvas.get('w1')).toMatchObject({ kind: 'document', path: 'documents/a.pdf', mime: 'application/pdf' });
  });

  it('answers invalid input with an error the model can act on', async () => {
    const { create, canvas } = await setup();
    const result = await create.execute({ kind: 'spreadsheet', title: '' }, context);
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('Invalid input for create_window:');
    expect(result.content).toMatch(/- kind: /);
    expect(result.content).toMatch(/- title: /);
    expect(canvas.windows()).toEqual([]);
  });
});

describe('update_window', () => {
  it('updates rows by id, adds new ones without reusing ids, deletes', async () => {
    const { create, update, canvas, events } = await setup();
    await create.execute(invoices, context);
    await update.execute({ window_id: 'w1', delete_row_ids: ['r1'] }, context);
    const result = await update.execute({ window_id: 'w1', rows: [{ id: 'inv-2', total: 100 }, { vendor: 'Initech', total: 5 }] }, context);
    expect(result.content).toBe('Updated table window "Invoices" (w1): 2 rows.');
    expect((canvas.get('w1') as TableWindow).rows).toEqual([
      { id: 'inv-2', cells: { vendor: 'Globex', total: 100 } },
      { id: 'r1', cells: { vendor: 'Initech', total: 5 } },
    ]);
    // Each change is one small patch event, not the whole table.
    expect(events.filter((e) => e.type === 'window_patched').map((e) => (e as { patch: { op: string } }).patch.op)).toEqual(['delete_rows', 'upsert_rows']);
  });

  it('refuses fields that do not fit the window kind', async () => {
    const { create, update } = await setup();
    await create.execute({ kind: 'notes', title: 'n', content: 'x' }, context);
    expect((await update.execute({ window_id: 'w1', rows: [{ a: 1 }] }, context)).content).toContain('Rows and columns are for table windows; w1 is a notes window.');
    expect((await update.execute({ window_id: 'w9', title: 'x' }, context)).content).toContain('No window with id "w9" is open.');
    expect((await update.execute({ window_id: 'w1' }, context)).content).toContain('Nothing to change');
    expect((await update.execute({ window_id: 'w1', content: 'new' }, context)).content).toBe('Updated notes window "n" (w1).');
  });
});

describe('close_window', () => {
  it('closes an open window and says when there is none', async () => {
    const { create, close, canvas } = await setup();
    await create.execute({ kind: 'notes', title: 'n', content: 'x' }, context);
    expect(await close.execute({ window_id: 'w1' }, context)).toEqual({ content: 'Closed window w1.' });
    expect(canvas.windows()).toEqual([]);
    expect((await close.execute({ window_id: 'w1' }, context)).is_error).toBe(true);
  });
});

describe('defineTool', () => {
  const schema = z.object({ n: z.number() });
  it('caps long output and says so', async () => {
    const tool = defineTool({ name: 'big', description: 'x', schema, title: () => 'big', run: async ({ n }) => 'x'.repeat(n) });
    const result = await tool.execute({ n: MAX_TOOL_OUTPUT_CHARS + 10 }, context);
    expect(result.content.length).toBeLessThan(MAX_TOOL_OUTPUT_CHARS + 100);
    expect(result.content).toMatch(/\[output truncated: 10 more characters not shown\]$/);
  });
  it('turns a throw into an error result', async () => {
    const tool = defineTool({ name: 'bad', description: 'x', schema, title: () => 'bad', run: async () => { throw new Error('disk full'); } });
    expect(await tool.execute({ n: 1 }, context)).toEqual({ content: 'bad failed: disk full', is_error: true });
  });
});
