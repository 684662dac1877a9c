import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.ts';
import { SchemaTooNewError } from './db-errors.ts';
import { MEMORY_FILES } from './memory-files.ts';
import { loadNodeSqlite, uniqueDbPath } from './node-sqlite.ts';
import type { ObservationProcessor } from './processor.ts';
import { openTestMemory } from './test-helpers.ts';

const idle: ObservationProcessor = {
  processBatch: async () => ({ status: 'empty' }),
  flushAll: async () => ({ status: 'done', batches: [], remaining: 0 }),
};

describe('openStackMemory', () => {
  it('lays out a new stack and opens both databases at their latest schema', async () => {
    const m = await openTestMemory();
    expect(m.bootstrap.previousVersion).toBe(0);
    expect([...m.disk.files.keys()].sort()).toEqual(['.os/VERSION', ...MEMORY_FILES.map((f) => `.os/memory/${f.name}`)].sort());
    expect(await m.transcript.db.get('PRAGMA user_version')).toEqual({ user_version: 1 });
    expect(await m.memory.db.get('PRAGMA user_version')).toEqual({ user_version: 4 });
    for (const db of [m.transcript.db, m.memory.db]) {
      expect(await db.get('PRAGMA journal_mode')).toEqual({ journal_mode: 'delete' });
      expect(await db.get('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
    }
    await m.close();
  });

  it('writes the session record with its first turn, not at its start, and counts turns still waiting', async () => {
    const m = await openTestMemory();
    const first = await m.startSession({ processor: idle });
    expect(first.sessionId).toMatch(/^sess_[0-9a-f]{16}$/);
    expect(await m.transcript.getSession(first.sessionId)).toBeUndefined();
    await first.hooks.userPromptSubmit('hello');
    await first.hooks.stop();
    expect(await m.transcript.getSession(first.sessionId)).toMatchObject({ startedAt: Date.UTC(2026, 0, 1), endedAt: null, observationCount: 1 });
    await first.hooks.sessionEnd();
    expect(await m.transcript.getSession(first.sessionId)).toMatchObject({ endedAt: Date.UTC(2026, 0, 1) });
    const unused = await m.startSession({ processor: idle, sessionId: 'unused' });
    expect((await unused.hooks.sessionEnd()).ok).toBe(true);
    expect(await m.transcript.getSession('unused')).toBeUndefined();
    const second = await m.startSession({ processor: idle, sessionId: 'next' });
    expect(second.hooks.turnCount).toBe(1);
    await m.close();
  });

  it('searches without writing anything', async () => {
    const m = await openTestMemory();
    await m.memory.addLearnings([{ type: 'fact', content: 'read only search' }]);
    const before = await m.memory.db.get<{ n: number }>('SELECT total_changes() AS n');
    await m.search('read only');
    await m.search('');
    expect(await m.memory.db.get('SELECT total_changes() AS n')).toEqual(before);
    await m.close();
  });

  it('refuses a stack whose memory.db is newer, and leaves its files alone', async () => {
    const runtime = await loadNodeSqlite();
    const paths = { transcript: uniqueDbPath('transcript.db'), memory: uniqueDbPath('memory.db') };
    const db = await openDatabase(runtime, { path: paths.memory, vfs: 'memory' });
    await db.exec('PRAGMA user_version = 9');
    await db.close();
    const error = await openTestMemory({ paths }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as Error).message).toMatch(/^memory\.db has schema version 9, but this version of Stackdocs understands schema versions up to 4\./);
  });
});

describe('snapshot', () => {
  it('copies both databases whole with VACUUM INTO, the learnings searchable in the copy', async () => {
    const m = await openTestMemory();
    await m.memory.addLearnings([{ type: 'preference', content: 'Vendor names are written in uppercase' }]);
    const into = { transcript: uniqueDbPath('copy-transcript.db'), memory: uniqueDbPath('copy-memory.db') };
    await m.snapshot(into);
    const runtime = await loadNodeSqlite();
    const copy = await openDatabase(runtime, { path: into.memory, vfs: 'memory', name: 'memory.db' });
    expect(await copy.all("SELECT content FROM learnings_fts WHERE learnings_fts MATCH 'uppercase'")).toEqual([{ content: 'Vendor names are written in uppercase' }]);
    expect(await copy.get('PRAGMA user_version')).toEqual({ user_version: 4 });
    await copy.close();
    const transcript = await openDatabase(runtime, { path: into.transcript, vfs: 'memory', name: 'transcript.db' });
    expect(await transcript.get('PRAGMA user_version')).toEqual({ user_version: 1 });
    await transcript.close();
    await m.close();
  });

  it('copies both databases into memory, whole', async () => {
    const m = await openTestMemory();
    await m.memory.addLearnings([{ type: 'preference', content: 'Invoices are filed by month' }]);
    const { transcript, memory } = await m.copies();
    for (const bytes of [transcript, memory]) {
      expect(new TextDecoder().decode(bytes.subarray(0, 16))).toBe('SQLite format 3\0');
      const pageSize = new DataView(bytes.buffer, bytes.byteOffset).getUint16(16);
      expect(bytes.byteLength).toBe(pageSize * new DataView(bytes.buffer, bytes.byteOffset).getUint32(28)); // the header's page count
    }
    expect(new TextDecoder().decode(memory)).toContain('Invoices are filed by month');
    await m.close();
  });
});
