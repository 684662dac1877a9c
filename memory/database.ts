// A thin, serialised connection over wa-sqlite: bound parameters, rows as objects, transactions,
// a cache of prepared statements, typed errors, and a busy wait that never blocks the thread.
import { SQLITE_DONE, SQLITE_OPEN_CREATE, SQLITE_OPEN_READWRITE, SQLITE_OPEN_URI, SQLITE_ROW } from '@journeyapps/wa-sqlite';
import { DbBusyError, DbClosedError, DbError, DbFullError, DbIoError, DbMisuseError, DbOpenError, toDbError } from './db-errors.ts';
import type { SqliteRuntime } from './sqlite-runtime.ts';

/** What may be bound to a `?`. Booleans bind as 0/1; integers beyond 32 bits bind as int64. */
export type SqlValue = string | number | bigint | boolean | Uint8Array | null;
/** What comes back: INTEGER as number (bigint beyond 2^53), REAL, TEXT, BLOB, NULL. */
export type SqlResult = string | number | bigint | Uint8Array | null;
export type Row = Record<string, SqlResult>;

export interface RunResult {
  /** Rows changed by the statement (SQLite's `changes()`). */
  changes: number;
  lastInsertRowid: number;
}

/** One statement at a time with positional `?` parameters. Errors are DbError subclasses. */
export interface Queryable {
  run(sql: string, params?: readonly SqlValue[]): Promise<RunResult>;
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** The first row, or undefined when there is none. */
  get<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** Runs a script of several statements without parameters (schemas, PRAGMAs). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  /** The name used in error messages, e.g. "memory.db". */
  readonly name: string;
  /**
   * Runs `fn` inside BEGIN IMMEDIATE ... COMMIT, rolling back when it throws (the error is
   * rethrown). Inside `fn`, use `tx` only: calling the Database itself would wait for this very
   * transaction to finish. Other callers wait until it ends.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Waits for queued work, finalises statements and closes the connection. */
  close(): Promise<void>;
  readonly closed: boolean;
}

export interface OpenDatabaseOptions {
  /** Path inside the VFS; on OPFS a path from the origin's root, e.g. `/stacks/s1/.os/memory/memory.db`. */
  path: string;
  vfs: string;
  /** Name for messages; defaults to the file name. */
  name?: string;
  /**
   * How long a statement waits for another connection (tab) before DbBusyError. Waiting happens
   * here, asynchronously; SQLite's own busy_timeout is kept at 0 because on a synchronous VFS its
   * busy handler spins the thread, so the lock it waits for could never be handed over.
   */
  busyTimeoutMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** The PRAGMAs every connection runs with; see README.md for why each. */
export const CONNECTION_PRAGMAS = [
  'PRAGMA busy_timeout = 0',
  'PRAGMA journal_mode = DELETE',
  'PRAGMA synchronous = FULL',
  'PRAGMA foreign_keys = ON',
  'PRAGMA temp_store = MEMORY',
] as const;

const STATEMENT_CACHE_SIZE = 64;

/** Opens (creating if absent) a database and applies CONNECTION_PRAGMAS. */
export async function openDatabase(runtime: SqliteRuntime, options: OpenDatabaseOptions): Promise<Database> {
  const name = options.name ?? options.path.split('/').pop() ?? options.path;
  if (!runtime.vfs.has(options.vfs)) throw new DbOpenError(`${name}: VFS "${options.vfs}" is not registered.`);
  const { sqlite3 } = runtime;
  let handle: number;
  try {
    // URIs: a copy may name the VFS it is made on (`VACUUM INTO 'file:/x.db?vfs=copies'`).
    handle = await runtime.exclusive(() => sqlite3.open_v2(options.path, SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, options.vfs));
  } catch (error) {
    throw new DbOpenError(`${name}: cannot open ${options.path}: ${(error as Error).message}`, { cause: error });
  }
  const db = new Connection(runtime, handle, name, options);
  try {
    await db.exec(CONNECTION_PRAGMAS.join(';\n'));
    const mode = await db.get<{ journal_mode: string }>('PRAGMA journal_mode');
    // A file left in WAL mode by another tool would otherwise be read without its log.
    if (mode?.journal_mode !== 'delete') {
      throw new DbOpenError(`${name}: journal mode is "${mode?.journal_mode}", expected "delete".`);
    }
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
  return db;
}

class Connection implements Database {
  readonly name: string;
  #sqlite3: SQLiteAPI;
  #handle: number;
  #queue: Promise<unknown> = Promise.resolve();
  #statements = new Map<string, number>();
  #closed = false;
  /** A transaction's rollback failed: the connection may still be inside it. */
  #leftOpen = false;
  #busyTimeoutMs: number;
  #now: () => number;
  #sleep: (ms: number) => Promise<void>;

  #takeVfsError: () => unknown;
  /** One SQLite call at a time across the module's connections (see SqliteRuntime.exclusive). */
  #exclusive: SqliteRuntime['exclusive'];

  constructor(runtime: SqliteRuntime, handle: number, name: string, options: OpenDatabaseOptions) {
    this.#sqlite3 = runtime.sqlite3;
    this.#exclusive = (op) => runtime.exclusive(op);
    this.#takeVfsError = () => runtime.takeVfsError(options.vfs);
    this.#handle = handle;
    this.name = name;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  get closed() {
    return this.#closed;
  }

  run(sql: string, params: readonly SqlValue[] = []) {
    return this.#serial(() => this.#whenFree(() => this.#run(sql, params)));
  }

  all<T = Row>(sql: string, params: readonly SqlValue[] = []) {
    return this.#serial(() => this.#whenFree(() => this.#all<T>(sql, params)));
  }

  async get<T = Row>(sql: string, params: readonly SqlValue[] = []) {
    return (await this.all<T>(sql, params))[0];
  }

  exec(sql: string) {
    return this.#serial(() => this.#whenFree(() => this.#exec(sql)));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      // A transaction an earlier failure left open (its rollback failed too) is rolled back now:
      // left open, it would refuse every later one ("cannot start a transaction within a transaction").
      if (this.#leftOpen && !this.#sqlite3.get_autocommit(this.#handle)) await this.#whenFree(() => this.#exec('ROLLBACK'));
      this.#leftOpen = false;
      // Taking the write lock up front means BUSY can only happen here, where a retry is safe.
      await this.#whenFree(() => this.#exec('BEGIN IMMEDIATE'));
      let active = true;
      // Statements the function issues at once (a Promise.all) run one after another: on one
      // connection, interleaved steps would share a prepared statement's bindings and cursor.
      let inside: Promise<unknown> = Promise.resolve();
      const guard = <R>(op: () => Promise<R>) => {
        if (!active) return Promise.reject(new DbMisuseError(`${this.name}: transaction handle used after the transaction ended.`));
        const next = inside.then(op);
        inside = next.catch(() => {});
        return next;
      };
      const tx: Queryable = {
        run: (sql, params = []) => guard(() => this.#run(sql, params)),
        all: <R>(sql: string, params: readonly SqlValue[] = []) => guard(() => this.#all<R>(sql, params)),
        get: async <R>(sql: string, params: readonly SqlValue[] = []) => (await guard(() => this.#all<R>(sql, params)))[0],
        exec: (sql) => guard(() => this.#exec(sql)),
      };
      try {
        const result = await fn(tx);
        active = false;
        // One it left running (not awaited) ends before the commit, inside the transaction.
        await inside;
        await this.#whenFree(() => this.#exec('COMMIT'));
        return result;
      } catch (error) {
        active = false;
        await inside;
        // The rollback can meet another connection's lock too: it waits like any statement.
        if (!this.#sqlite3.get_autocommit(this.#handle)) await this.#whenFree(() => this.#exec('ROLLBACK')).catch(() => (this.#leftOpen = true));
        throw error;
      }
    });
  }

  close(): Promise<void> {
    return this.#serial(async () => {
      if (this.#closed) return;
      this.#closed = true;
      await this.#exclusive(async () => {
        for (const stmt of this.#statements.values()) await this.#sqlite3.finalize(stmt);
        this.#statements.clear();
        try {
          await this.#sqlite3.close(this.#handle);
        } catch (error) {
          throw this.#typed(error, `${this.name}: close`);
        }
      });
    }, true);
  }

  /** One operation at a time: wa-sqlite calls are async, and interleaving would mix transactions. */
  #serial<T>(op: () => Promise<T>, allowClosed = false): Promise<T> {
    const next = this.#queue.then(() => {
      if (this.#closed && !allowClosed) throw new DbClosedError(this.name);
      return op();
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  /**
   * The typed error; an I/O error whose cause in the VFS was the browser's quota is DbFullError
   * (SQLite reports a write refused for quota as SQLITE_IOERR_WRITE).
   */
  #typed(error: unknown, context: string): DbError {
    const typed = toDbError(error, context);
    const cause = this.#takeVfsError();
    if (typed instanceof DbIoError && (cause as { name?: unknown } | undefined)?.name === 'QuotaExceededError') {
      return new DbFullError(`${typed.message} (the browser's storage is full)`, { ...(typed.sqliteCode === undefined ? {} : { sqliteCode: typed.sqliteCode }), cause });
    }
    return typed;
  }

  /** Retries an operation that met another connection's lock, with backoff, until the timeout. */
  async #whenFree<T>(op: () => Promise<T>): Promise<T> {
    const deadline = this.#now() + this.#busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await op();
      } catch (error) {
        const typed = this.#typed(error, this.name);
        const left = deadline - this.#now();
        if (!(typed instanceof DbBusyError) || left <= 0) throw typed;
        await this.#sleep(Math.min(left, 5 * 2 ** Math.min(attempt, 6)));
      }
    }
  }

  async #run(sql: string, params: readonly SqlValue[]): Promise<RunResult> {
    await this.#step(sql, params, undefined);
    return { changes: this.#sqlite3.changes(this.#handle), lastInsertRowid: Number(this.#sqlite3.last_insert_id(this.#handle)) };
  }

  async #all<T>(sql: string, params: readonly SqlValue[]): Promise<T[]> {
    const rows: T[] = [];
    await this.#step(sql, params, (row) => rows.push(row as T));
    return rows;
  }

  async #exec(sql: string): Promise<void> {
    try {
      await this.#exclusive(() => this.#sqlite3.exec(this.#handle, sql));
    } catch (error) {
      throw this.#typed(error, `${this.name}: ${shorten(sql)}`);
    }
  }

  #step(sql: string, params: readonly SqlValue[], onRow: ((row: Row) => void) | undefined): Promise<void> {
    return this.#exclusive(() => this.#stepNow(sql, params, onRow));
  }

  async #stepNow(sql: string, params: readonly SqlValue[], onRow: ((row: Row) => void) | undefined): Promise<void> {
    const sqlite3 = this.#sqlite3;
    const stmt = await this.#prepare(sql);
    try {
      const expected = sqlite3.bind_parameter_count(stmt);
      if (expected !== params.length) {
        throw new DbMisuseError(`${this.name}: statement takes ${expected} parameters, got ${params.length}: ${shorten(sql)}`);
      }
      sqlite3.clear_bindings(stmt);
      params.forEach((value, i) => sqlite3.bind(stmt, i + 1, toBindable(value)));
      // Read per run: SQLite re-prepares a statement after a schema change, which can change `*`.
      const columns = onRow ? sqlite3.column_names(stmt) : [];
      for (;;) {
        const rc = await sqlite3.step(stmt);
        if (rc === SQLITE_DONE) break;
        if (rc !== SQLITE_ROW || !onRow) continue;
        const values = sqlite3.row(stmt);
        const row: Row = {};
        columns.forEach((column, i) => (row[column] = values[i] as SqlResult));
        onRow(row);
      }
    } catch (error) {
      throw this.#typed(error, `${this.name}: ${shorten(sql)}`);
    } finally {
      // reset() reports the last step's error again, which was already thrown above.
      await sqlite3.reset(stmt).catch(() => {});
    }
  }

  async #prepare(sql: string): Promise<number> {
    const cached = this.#statements.get(sql);
    if (cached) {
      // Map order doubles as recency for the LRU.
      this.#statements.delete(sql);
      this.#statements.set(sql, cached);
      return cached;
    }
    const iterator = this.#sqlite3.statements(this.#handle, sql, { unscoped: true })[Symbol.asyncIterator]();
    let stmt: number | undefined;
    try {
      const first = await iterator.next();
      stmt = first.done ? undefined : first.value;
    } catch (error) {
      throw this.#typed(error, `${this.name}: ${shorten(sql)}`);
    } finally {
      await iterator.return?.();
    }
    if (stmt === undefined) throw new DbMisuseError(`${this.name}: no statement in "${shorten(sql)}"`);
    this.#statements.set(sql, stmt);
    if (this.#statements.size > STATEMENT_CACHE_SIZE) {
      const [oldestSql, oldest] = this.#statements.entries().next().value!;
      this.#statements.delete(oldestSql);
      await this.#sqlite3.finalize(oldest);
    }
    return stmt;
  }
}

function toBindable(value: SqlValue): SQLiteCompatibleType {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  // wa-sqlite binds non-int32 numbers as doubles, which would store timestamps as REAL.
  if (typeof value === 'number' && Number.isInteger(value) && (value > 0x7fffffff || value < -0x80000000)) {
    return BigInt(value);
  }
  return value;
}

function shorten(sql: string): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}
