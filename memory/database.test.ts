import { SQLITE_BUSY } from '@journeyapps/wa-sqlite';
import { MemoryVFS } from '@journeyapps/wa-sqlite/src/examples/MemoryVFS.js';
import { describe, expect, it } from 'vitest';
import { CONNECTION_PRAGMAS, openDatabase } from './database.ts';
import {
  DbBusyError,
  DbClosedError,
  DbConstraintError,
  DbMisuseError,
  DbOpenError,
  DbSqlError,
  toDbError,
  toDbErrorShape,
} from './db-errors.ts';
import { loadNodeSqlite, uniqueDbPath } from './node-sqlite.ts';

async function fresh(name = 'test.db') {
  const runtime = await loadNodeSqlite();
  return openDatabase(runtime, { path: uniqueDbPath(name), vfs: 'memory' });
}

describe('database', () => {
  it('opens with the crash-safe pragmas', async () => {
    const db = await fresh();
    expect(await db.get('PRAGMA journal_mode')).toEqual({ journal_mode: 'delete' });
    expect(await db.get('PRAGMA synchronous')).toEqual({ synchronous: 2 }); // FULL
    expect(await db.get('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
    expect(await db.get('PRAGMA busy_timeout')).toEqual({ timeout: 0 });
    expect(CONNECTION_PRAGMAS).toContain('PRAGMA journal_mode = DELETE');
    await db.close();
  });

  it('runs statements with bound parameters and returns rows as objects', async () => {
    const db = await fresh();
    await db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, at INTEGER, ok INTEGER, data BLOB, x REAL) STRICT');
    const at = 1_767_225_600_123; // beyond 32 bits: must stay an INTEGER
    const result = await db.run('INSERT INTO t (name, at, ok, data, x) VALUES (?, ?, ?, ?, ?)', ["O'Brien \"quoted\"", at, true, new Uint8Array([1, 2]), 1.5]);
    expect(result).toEqual({ changes: 1, lastInsertRowid: 1 });
    const row = await db.get('SELECT name, at, typeof(at) AS kind, ok, data, x FROM t WHERE id = ?', [1]);
    expect(row).toEqual({ name: "O'Brien \"quoted\"", at, kind: 'integer', ok: 1, data: new Uint8Array([1, 2]), x: 1.5 });
    expect(await db.get('SELECT * FROM t WHERE id = ?', [99])).toBeUndefined();
    expect(await db.all('SELECT id FROM t')).toEqual([{ id: 1 }]);
    await db.close();
  });

  it('reuses prepared statements and keeps working past the cache size', async () => {
    const db = await fresh();
    await db.exec('CREATE TABLE t (v INTEGER)');
    for (let i = 0; i < 100; i++) await db.run(`INSERT INTO t (v) VALUES (? + ${i % 70})`, [i]);
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 100 });
    await db.close();
  });

  it('commits a transaction and rolls back a failed one, rethrowing its error', async () => {
    const db = await fresh();
    await db.exec('CREATE TABLE t (v INTEGER UNIQUE)');
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (1)');
      await tx.run('INSERT INTO t VALUES (2)');
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t VALUES (3)');
        await tx.run('INSERT INTO t VALUES (1)');
      }),
    ).rejects.toBeInstanceOf(DbConstraintError);
    const boom = new Error('app failure');
    await expect(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO t VALUES (4)');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await db.all('SELECT v FROM t ORDER BY v')).toEqual([{ v: 1 }, { v: 2 }]);
    await db.close();
  });

  it('serialises concurrent callers so transactions never interleave', async () => {
    const db = await fresh();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const slow = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (1)');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tx.run('INSERT INTO t VALUES (2)');
      return (await tx.get<{ n: number }>('SELECT count(*) AS n FROM t'))!.n;
    });
    const outside = db.run('INSERT INTO t VALUES (3)');
    expect(await slow).toBe(2);
    await outside;
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 3 });
    await db.close();
  });

  it('runs statements a transaction issues at once one after another, each with its own values', async () => {
    const db = await fresh();
    await db.exec('CREATE TABLE t (v INTEGER)');
    const values = Array.from({ length: 40 }, (_, i) => i + 1);
    await db.transaction(async (tx) => {
      await Promise.all(values.map((v) => tx.run('INSERT INTO t VALUES (?)', [v])));
    });
    expect(await db.all('SELECT v FROM t ORDER BY v')).toEqual(values.map((v) => ({ v })));
    // One left running when the transaction's function returns is finished before the commit.
    await db.transaction(async (tx) => {
      void tx.run('INSERT INTO t VALUES (?)', [100]);
    });
    expect(await db.get('SELECT count(*) AS n FROM t WHERE v = 100')).toEqual({ n: 1 });
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 41 });
    await db.close();
  });

  it('refuses a transaction handle used after its transaction', async () => {
    const db = await fresh();
    let leaked: { run(sql: string): Promise<unknown> } | undefined;
    await db.transaction(async (tx) => {
      leaked = tx;
    });
    await expect(leaked!.run('SELECT 1')).rejects.toBeInstanceOf(DbMisuseError);
    await db.close();
  });

  it('raises typed errors: bad SQL, wrong parameter count, closed database', async () => {
    const db = await fresh('errors.db');
    await expect(db.run('SELEC nonsense')).rejects.toBeInstanceOf(DbSqlError);
    await expect(db.run('SELECT ?', [])).rejects.toBeInstanceOf(DbMisuseError);
    const error = await db.all('SELECT * FROM missing').catch((e: unknown) => e);
    expect(toDbErrorShape(error)).toMatchObject({ code: 'db_sql', retryable: false });
    expect((error as Error).message).toContain('errors.db');
    await db.close();
    await expect(db.run('SELECT 1')).rejects.toBeInstanceOf(DbClosedError);
    await db.close(); // closing twice is harmless
  });

  it('refuses an unregistered VFS with an open error', async () => {
    const runtime = await loadNodeSqlite();
    await expect(openDatabase(runtime, { path: '/x.db', vfs: 'nope' })).rejects.toBeInstanceOf(DbOpenError);
  });

  it('maps SQLite result codes to classes and shapes', () => {
    expect(toDbError({ code: 5, message: 'database is locked' }, 'x')).toBeInstanceOf(DbBusyError);
    expect(toDbError({ code: 19 | (8 << 8), message: 'x' }, 'x')).toBeInstanceOf(DbConstraintError);
    expect(toDbErrorShape(toDbError({ code: 5, message: 'locked' }, 'memory.db'))).toEqual({
      code: 'db_busy',
      message: 'memory.db: locked',
      retryable: true,
    });
    expect(toDbErrorShape(new Error('plain'))).toEqual({ code: 'db_sql', message: 'database: plain', retryable: false });
  });
});

describe('busy waiting', () => {
  // A VFS whose lock reports SQLITE_BUSY a few times stands in for another tab holding the file.
  async function busyDatabase(busyTimeoutMs: number) {
    const runtime = await loadNodeSqlite();
    type Lockable = { jLock(fileId: number, lockType: number): number; name: string };
    const Base = MemoryVFS as unknown as new (name: string, module: unknown) => Lockable;
    const state = { busy: 0, locks: 0 };
    class BusyVFS extends Base {
      override jLock(fileId: number, lockType: number): number {
        state.locks++;
        if (state.busy > 0) {
          state.busy--;
          return SQLITE_BUSY;
        }
        return super.jLock(fileId, lockType);
      }
    }
    const vfs = new BusyVFS(`busy-${Math.random().toString(36).slice(2)}`, runtime.module);
    runtime.adoptVfs(vfs as unknown as SQLiteVFS, 'memory');
    let clock = 0;
    const sleeps: number[] = [];
    const db = await openDatabase(runtime, {
      path: uniqueDbPath('busy.db'),
      vfs: vfs.name,
      busyTimeoutMs,
      now: () => clock,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
    });
    await db.exec('CREATE TABLE t (v INTEGER)');
    return { db, state, sleeps };
  }

  it('waits for the lock with backoff instead of failing at once', async () => {
    const { db, state, sleeps } = await busyDatabase(5_000);
    state.busy = 3;
    await db.run('INSERT INTO t VALUES (1)');
    expect(sleeps).toEqual([5, 10, 20]);
    state.busy = 2;
    await db.transaction(async (tx) => tx.run('INSERT INTO t VALUES (2)'));
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 2 });
    await db.close();
  });

  it('gives up after the busy timeout with a retryable DbBusyError', async () => {
    const { db, state } = await busyDatabase(100);
    state.busy = 1_000;
    const error = await db.run('INSERT INTO t VALUES (1)').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DbBusyError);
    expect(toDbErrorShape(error)).toMatchObject({ code: 'db_busy', retryable: true });
    state.busy = 0;
    expect(await db.get('SELECT count(*) AS n FROM t')).toEqual({ n: 0 });
    await db.close();
  });

  it('a rollback that meets a lock waits for it, and one that failed is done before the next transaction', async () => {
    const runtime = await loadNodeSqlite();
    // ROLLBACK answers BUSY `failRollbacks` times, as a VFS does when another context holds the file.
    const gate = { failRollbacks: 0 };
    const sqlite3 = Object.create(runtime.sqlite3) as typeof runtime.sqlite3;
    sqlite3.exec = async (db, sql, ...rest) => {
      if (sql === 'ROLLBACK' && gate.failRollbacks > 0) {
        gate.failRollbacks--;
        throw Object.assign(new Error('database is locked'), { code: SQLITE_BUSY });
      }
      return runtime.sqlite3.exec(db, sql, ...rest);
    };
    let clock = 0;
    const db = await openDatabase({ ...runtime, sqlite3 }, {
      path: uniqueDbPath('rollback.db'),
      vfs: 'memory',
      busyTimeoutMs: 100,
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
    });
    await db.exec('CREATE TABLE t (v INTEGER)');
    const failing = (n: number) => db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (?)', [n]);
      throw new Error(`transaction ${n} failed`);
    });
    // Locked twice, then free: rolled back within the wait.
    gate.failRollbacks = 2;
    await expect(failing(1)).rejects.toThrow('transaction 1 failed');
    expect(gate.failRollbacks).toBe(0);
    // Locked past the wait: the connection is left inside the transaction, until the next one.
    clock = 0;
    gate.failRollbacks = 1_000;
    await expect(failing(2)).rejects.toThrow('transaction 2 failed');
    gate.failRollbacks = 0;
    await db.transaction(async (tx) => tx.run('INSERT INTO t VALUES (3)'));
    expect(await db.all('SELECT v FROM t')).toEqual([{ v: 3 }]);
    await db.close();
  });
});

describe('connections sharing one module', () => {
  it('never runs a finished statement again while another connection waits on its file system', async () => {
    const runtime = await loadNodeSqlite();
    const module = runtime.module as { retryOps: Promise<unknown>[] };
    type Openable = {
      jOpen(name: string | null, fileId: number, flags: number, out: DataView): number;
      jClose(fileId: number): number;
      mapIdToFile: Map<number, unknown>;
      name: string;
    };
    const Base = MemoryVFS as unknown as new (name: string, module: unknown) => Openable;
    // Like OPFSCoopSyncVFS: a database file seen for the first time is fetched asynchronously,
    // the open answering BUSY with that work listed for wa-sqlite to wait for and retry.
    const known = new Set<string>();
    class AsyncOpenVFS extends Base {
      override jOpen(name: string | null, fileId: number, flags: number, out: DataView): number {
        if (name && /copy-\d+\.db$/.test(name) && !known.has(name)) {
          module.retryOps.push(new Promise((resolve) => setTimeout(resolve, 1)).then(() => known.add(name)));
          return SQLITE_BUSY;
        }
        return super.jOpen(name, fileId, flags, out);
      }

      override jClose(fileId: number): number {
        return this.mapIdToFile.has(fileId) ? super.jClose(fileId) : 0; // SQLite closes an open that failed too
      }
    }
    const vfs = new AsyncOpenVFS(`async-open-${Math.random().toString(36).slice(2)}`, runtime.module);
    runtime.adoptVfs(vfs as unknown as SQLiteVFS, 'memory');
    const dir = uniqueDbPath('shared');
    const copier = await openDatabase(runtime, { path: `${dir}/source.db`, vfs: vfs.name });
    const writer = await openDatabase(runtime, { path: `${dir}/writer.db`, vfs: vfs.name });
    await copier.exec('CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)');
    await writer.exec('CREATE TABLE t (v INTEGER)');
    // A checkpoint copies one database (VACUUM INTO a new file) while the other takes writes.
    const copies = (async () => {
      for (let i = 0; i < 20; i++) await copier.exec(`VACUUM INTO '${dir}/copy-${i}.db'`);
    })();
    const writes = (async () => {
      for (let i = 0; i < 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 0)); // as a stack's writes come, between the file system's work
        if (i % 2) await writer.run('INSERT INTO t VALUES (?)', [i]);
        else await writer.transaction((tx) => tx.run('INSERT INTO t VALUES (?)', [i]));
      }
    })();
    await Promise.all([copies, writes]);
    expect(await writer.get('SELECT count(*) AS n, count(DISTINCT v) AS d FROM t')).toEqual({ n: 200, d: 200 });
    expect(known.size).toBe(20);
    await copier.close();
    await writer.close();
  });
});
