// Typed database errors keyed by cause. Inside memory/ code throws these; at the worker boundary
// `toDbErrorShape` turns any of them into a plain `{code, message, retryable}`.

export type DbErrorCode =
  | 'db_busy'
  | 'db_constraint'
  | 'db_corrupt'
  | 'db_full'
  | 'db_io'
  | 'db_open'
  | 'db_schema_too_new'
  | 'db_migration'
  | 'db_misuse'
  | 'db_closed'
  | 'db_sql';

/** What crosses a worker boundary instead of an Error instance. */
export interface DbErrorShape {
  code: DbErrorCode;
  message: string;
  retryable: boolean;
}

export class DbError extends Error {
  readonly code: DbErrorCode;
  /** SQLite's primary result code when SQLite raised it (e.g. 5 for SQLITE_BUSY). */
  readonly sqliteCode: number | undefined;
  readonly retryable: boolean;

  constructor(code: DbErrorCode, message: string, options: { sqliteCode?: number; retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.sqliteCode = options.sqliteCode;
    this.retryable = options.retryable ?? false;
  }
}

/** Another connection (another tab) held the database longer than the busy timeout. */
export class DbBusyError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_busy', message, { ...options, retryable: true });
  }
}

export class DbConstraintError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_constraint', message, options);
  }
}

export class DbCorruptError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_corrupt', message, options);
  }
}

/** The browser's storage quota (or SQLite's page limit) is exhausted. */
export class DbFullError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_full', message, options);
  }
}

export class DbIoError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_io', message, options);
  }
}

export class DbOpenError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_open', message, options);
  }
}

/** The file was written by a newer version of Stackdocs; opening it could damage it. */
export class SchemaTooNewError extends DbError {
  constructor(
    readonly database: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      'db_schema_too_new',
      `${database} has schema version ${found}, but this version of Stackdocs understands schema versions up to ${supported}. ` +
        'It was written by a newer Stackdocs; update the app to open this stack (the file was left untouched).',
    );
  }
}

export class MigrationError extends DbError {
  constructor(database: string, version: number, name: string, cause: unknown) {
    super('db_migration', `${database}: migration ${version} (${name}) failed and was rolled back: ${messageOf(cause)}`, { cause });
  }
}

/** A programming error: wrong parameter count, a transaction handle used after it ended... */
export class DbMisuseError extends DbError {
  constructor(message: string) {
    super('db_misuse', message);
  }
}

export class DbClosedError extends DbError {
  constructor(database: string) {
    super('db_closed', `${database} is closed.`);
  }
}

export class DbSqlError extends DbError {
  constructor(message: string, options: { sqliteCode?: number; cause?: unknown } = {}) {
    super('db_sql', message, options);
  }
}

// SQLite primary result codes (https://sqlite.org/rescode.html).
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_CONSTRAINT = 19;
const SQLITE_MISUSE = 21;
const SQLITE_NOTADB = 26;

/**
 * Wraps anything thrown by wa-sqlite (a SQLiteError carrying `code`) in the matching typed class.
 * `context` names the database and, when useful, the statement.
 */
export function toDbError(error: unknown, context: string): DbError {
  if (error instanceof DbError) return error;
  const raw = typeof (error as { code?: unknown })?.code === 'number' ? (error as { code: number }).code : undefined;
  const primary = raw === undefined ? undefined : raw & 0xff;
  const message = `${context}: ${messageOf(error)}`;
  const options = { ...(primary === undefined ? {} : { sqliteCode: primary }), cause: error };
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return new DbBusyError(message, options);
    case SQLITE_CONSTRAINT:
      return new DbConstraintError(message, options);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new DbCorruptError(message, options);
    case SQLITE_FULL:
      return new DbFullError(message, options);
    case SQLITE_IOERR:
      return new DbIoError(message, options);
    case SQLITE_CANTOPEN:
      return new DbOpenError(message, options);
    case SQLITE_MISUSE:
      return new DbMisuseError(message);
    default:
      if (isQuotaError(error)) return new DbFullError(message, options);
      return new DbSqlError(message, options);
  }
}

/** The plain shape for a worker boundary. Never throws. */
export function toDbErrorShape(error: unknown): DbErrorShape {
  const typed = error instanceof DbError ? error : toDbError(error, 'database');
  return { code: typed.code, message: typed.message, retryable: typed.retryable };
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  const message = (error as { message?: unknown })?.message;
  return typeof message === 'string' ? message : String(error);
}

function isQuotaError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'QuotaExceededError';
}
