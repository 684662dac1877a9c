import { afterEach, describe, expect, it } from 'vitest';
import { DbConstraintError } from './db-errors.ts';
import { openTestMemory, type TestMemory } from './test-helpers.ts';

let opened: TestMemory | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function setup() {
  opened = await openTestMemory();
  return opened;
}

async function ftsMatch(m: TestMemory, word: string) {
  const rows = await m.memory.db.all<{ rowid: number }>('SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rowid', [word]);
  return rows.map((row) => row.rowid);
}

describe('learnings and learnings_fts', () => {
  it('keeps the FTS index in step on insert, update and delete', async () => {
    const m = await setup();
    await m.memory.addLearnings([
      { type: 'fact', content: 'The user works at Acme' },
      { type: 'preference', content: 'Reports in euros' },
    ]);
    expect(await ftsMatch(m, 'acme')).toEqual([1]);
    await m.memory.db.run("UPDATE learnings SET content = 'The user works at Globex' WHERE id = 1");
    expect(await ftsMatch(m, 'acme')).toEqual([]);
    expect(await ftsMatch(m, 'globex')).toEqual([1]);
    await m.memory.db.run('DELETE FROM learnings WHERE id = 1');
    expect(await ftsMatch(m, 'globex')).toEqual([]);
    expect(await ftsMatch(m, 'euros')).toEqual([2]);
    // The index agrees with its content table.
    await m.memory.db.run("INSERT INTO learnings_fts(learnings_fts, rank) VALUES ('integrity-check', 1)");
  });

  it('stores a learning once, checks types and confidence', async () => {
    const m = await setup();
    const added = await m.memory.addLearnings([
      { type: 'fact', content: 'Same' },
      { type: 'fact', content: 'Same' },
      { type: 'pattern', content: 'Same', confidence: 0.5, sessionId: 's1', sourceObservationId: 3 },
    ]);
    expect(added).toBe(2);
    expect(await m.memory.countLearnings()).toBe(2);
    const [latest] = await m.memory.recentLearnings(1);
    expect(latest).toMatchObject({ type: 'pattern', content: 'Same', confidence: 0.5, sessionId: 's1', sourceObservationId: 3 });
    await expect(m.memory.addLearnings([{ type: 'rumour' as never, content: 'x' }])).rejects.toBeInstanceOf(DbConstraintError);
    await expect(m.memory.addLearnings([{ type: 'fact', content: 'y', confidence: 2 }])).rejects.toBeInstanceOf(DbConstraintError);
    await expect(m.memory.addLearnings([{ type: 'fact', content: '' }])).rejects.toBeInstanceOf(DbConstraintError);
  });
});

describe('pending actions', () => {
  it('lists open actions by priority, then age, and closes them', async () => {
    const m = await setup();
    const low = await m.memory.addPendingAction({ content: 'Tidy artifacts', priority: 'low' });
    m.tick();
    await m.memory.addPendingAction({ content: 'Send the report' });
    m.tick();
    const high = await m.memory.addPendingAction({ content: 'Ask for the March invoice', priority: 'high' });
    expect((await m.memory.pendingActions()).map((a) => a.content)).toEqual(['Ask for the March invoice', 'Send the report', 'Tidy artifacts']);
    expect(await m.memory.resolveAction(high, 'done')).toBe(true);
    expect(await m.memory.resolveAction(high, 'done')).toBe(false);
    expect(await m.memory.resolveAction(low, 'dismissed')).toBe(true);
    expect((await m.memory.pendingActions()).map((a) => a.content)).toEqual(['Send the report']);
  });
});

describe('documents and extractions', () => {
  it('records documents, updates them and keeps extractions per document', async () => {
    const m = await setup();
    const doc = await m.documents.addDocument({ id: 'd1', filename: 'invoice.pdf', path: 'documents/invoice.pdf', size: 1234, mime: 'application/pdf' });
    expect(doc).toMatchObject({ id: 'd1', status: 'uploaded', description: '', pageCount: null, error: null });
    m.tick();
    const updated = await m.documents.updateDocument('d1', { status: 'ready', pageCount: 2, description: 'ACME invoice for March' });
    expect(updated).toMatchObject({ status: 'ready', pageCount: 2, description: 'ACME invoice for March' });
    expect(updated!.updatedAt).toBeGreaterThan(updated!.createdAt);
    await expect(
      m.documents.addDocument({ id: 'd2', filename: 'x', path: 'documents/invoice.pdf', size: 1, mime: 'text/plain' }),
    ).rejects.toBeInstanceOf(DbConstraintError);

    const first = await m.documents.addExtraction({ documentId: 'd1', fields: { vendor: 'Acme' }, confidence: { vendor: 0.6 } });
    expect(first).toMatchObject({ documentId: 'd1', fields: { vendor: 'Acme' }, confidence: { vendor: 0.6 }, status: 'complete' });
    const corrected = await m.documents.updateExtraction(first.id, { fields: { vendor: 'ACME' }, status: 'corrected' });
    expect(corrected).toMatchObject({ fields: { vendor: 'ACME' }, confidence: { vendor: 0.6 }, status: 'corrected' });
    expect((await m.documents.latestExtraction('d1'))!.id).toBe(first.id);
    await expect(m.documents.addExtraction({ documentId: 'missing', fields: {} })).rejects.toBeInstanceOf(DbConstraintError);

    expect(await m.documents.deleteDocument('d1')).toBe(true);
    expect(await m.documents.latestExtraction('d1')).toBeUndefined();
    expect(await m.documents.listDocuments()).toEqual([]);
  });
});
