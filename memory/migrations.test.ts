import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.ts';
import { MigrationError, SchemaTooNewError } from './db-errors.ts';
import { MEMORY_MIGRATIONS } from './memory-schema.ts';
import { migrate, userVersion } from './migrations.ts';
import { loadNodeSqlite, uniqueDbPath } from './node-sqlite.ts';
import { openStackDatabases } from './open-databases.ts';
import { TRANSCRIPT_MIGRATIONS } from './transcript-schema.ts';

async function open(path = uniqueDbPath('m.db'), name?: string) {
  const runtime = await loadNodeSqlite();
  return openDatabase(runtime, { path, vfs: 'memory', ...(name ? { name } : {}) });
}

async function names(db: Awaited<ReturnType<typeof open>>, type: string) {
  const rows = await db.all<{ name: string }>(
    "SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts_%' ORDER BY name",
    [type],
  );
  return rows.map((row) => row.name);
}

describe('migrations', () => {
  it('brings transcript.db from empty to the latest version', async () => {
    const db = await open();
    const report = await migrate(db, TRANSCRIPT_MIGRATIONS);
    expect(report).toEqual({ from: 0, to: TRANSCRIPT_MIGRATIONS.length, applied: [1] });
    expect(await names(db, 'table')).toEqual(['events', 'observations', 'sessions']);
    const columns = (await db.all<{ name: string }>("SELECT name FROM pragma_table_info('observations')")).map((c) => c.name);
    expect(columns).toEqual(['id', 'timestamp', 'session_id', 'sequence_num', 'user_message', 'tool_calls_json', 'agent_response', 'processed']);
    const sessionColumns = (await db.all<{ name: string }>("SELECT name FROM pragma_table_info('sessions')")).map((c) => c.name);
    expect(sessionColumns).toEqual(['id', 'started_at', 'ended_at', 'message_count', 'observation_count']);
    await db.close();
  });

  it('brings memory.db from empty to the latest version, with the FTS5 table', async () => {
    const db = await open();
    const report = await migrate(db, MEMORY_MIGRATIONS);
    expect(report).toEqual({ from: 0, to: 4, applied: [1, 2, 3, 4] });
    expect(await names(db, 'table')).toEqual(['documents', 'extractions', 'learnings', 'learnings_fts', 'pending_actions', 'processor_runs', 'task_runs', 'tasks']);
    expect(await db.get("SELECT sql LIKE '%USING fts5%' AS fts FROM sqlite_schema WHERE name = 'learnings_fts'")).toEqual({ fts: 1 });
    const learningColumns = (await db.all<{ name: string }>("SELECT name FROM pragma_table_info('learnings')")).map((c) => c.name);
    expect(learningColumns).toEqual(['id', 'created_at', 'session_id', 'type', 'content', 'source_observation_id', 'confidence', 'source', 'source_label']);
    const actionColumns = (await db.all<{ name: string }>("SELECT name FROM pragma_table_info('pending_actions')")).map((c) => c.name);
    expect(actionColumns).toEqual(['id', 'created_at', 'content', 'priority', 'status', 'source_learning_id', 'resolved_at', 'source', 'source_label']);
    await db.close();
  });

  it('does nothing on a database that is up to date', async () => {
    const path = uniqueDbPath('again.db');
    const first = await open(path);
    await migrate(first, MEMORY_MIGRATIONS);
    await first.close();
    const second = await open(path);
    expect(await migrate(second, MEMORY_MIGRATIONS)).toEqual({ from: 4, to: 4, applied: [] });
    await second.close();
  });

  it('upgrades an older file step by step', async () => {
    const db = await open();
    await migrate(db, MEMORY_MIGRATIONS.slice(0, 1));
    expect(await userVersion(db)).toBe(1);
    expect(await migrate(db, MEMORY_MIGRATIONS)).toEqual({ from: 1, to: 4, applied: [2, 3, 4] });
    await db.close();
  });

  it('refuses a database from a newer schema, naming the file and both versions, and leaves it untouched', async () => {
    const path = uniqueDbPath('memory.db');
    const db = await open(path, 'memory.db');
    await db.exec('PRAGMA user_version = 7; CREATE TABLE future (x)');
    const error = await migrate(db, MEMORY_MIGRATIONS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as SchemaTooNewError).message).toBe(
      'memory.db has schema version 7, but this version of Stackdocs understands schema versions up to 4. ' +
        'It was written by a newer Stackdocs; update the app to open this stack (the file was left untouched).',
    );
    expect(error).toMatchObject({ code: 'db_schema_too_new', found: 7, supported: 4, database: 'memory.db' });
    expect(await names(db, 'table')).toEqual(['future']);
    await db.close();
  });

  it('refuses to open a stack whose transcript.db is newer, closing what it opened', async () => {
    const runtime = await loadNodeSqlite();
    const paths = { transcript: uniqueDbPath('transcript.db'), memory: uniqueDbPath('memory.db') };
    const db = await open(paths.transcript);
    await db.exec('PRAGMA user_version = 3');
    await db.close();
    await expect(openStackDatabases(runtime, 'memory', paths)).rejects.toThrow(
      'transcript.db has schema version 3, but this version of Stackdocs understands schema versions up to 1.',
    );
  });

  it('rolls a failing migration back entirely', async () => {
    const db = await open();
    const broken = [
      { version: 1, name: 'good', sql: 'CREATE TABLE a (x)' },
      { version: 2, name: 'bad', sql: 'CREATE TABLE b (x); CREATE TABLE a (y)' },
    ];
    const error = await migrate(db, broken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toMatch(/migration 2 \(bad\) failed and was rolled back/);
    expect(await userVersion(db)).toBe(1);
    expect(await names(db, 'table')).toEqual(['a']);
    await db.close();
  });

  it('rejects a migration list with gaps', async () => {
    const db = await open();
    await expect(migrate(db, [{ version: 2, name: 'skip', sql: '' }])).rejects.toThrow(/expected 1/);
    await db.close();
  });
});
