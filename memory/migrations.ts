// Versioned schemas: PRAGMA user_version says which migrations a file has had; pending ones run
// in order, each in its own transaction, and a file newer than this code is refused untouched.
import type { Database } from './database.ts';
import { MigrationError, SchemaTooNewError } from './db-errors.ts';

export interface Migration {
  /** 1, 2, 3... with no gaps; the file's user_version after this migration ran. */
  version: number;
  name: string;
  /** A SQL script. It runs inside the migration's transaction, so it must not BEGIN/COMMIT. */
  sql: string;
}

export interface MigrationReport {
  from: number;
  to: number;
  applied: number[];
}

/**
 * Brings `db` to the newest version in `migrations`. Throws SchemaTooNewError when the file is
 * newer than the code, MigrationError (after rolling that migration back) when one fails.
 * Safe with two tabs opening the same stack: the version is re-read inside each transaction.
 */
export async function migrate(db: Database, migrations: readonly Migration[]): Promise<MigrationReport> {
  checkSequence(db.name, migrations);
  const latest = migrations.at(-1)?.version ?? 0;
  const from = await userVersion(db);
  if (from > latest) throw new SchemaTooNewError(db.name, from, latest);
  const applied: number[] = [];
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    const ran = await db.transaction(async (tx) => {
      const current = (await tx.get<{ user_version: number }>('PRAGMA user_version'))?.user_version ?? 0;
      if (current > latest) throw new SchemaTooNewError(db.name, current, latest);
      if (current >= migration.version) return false; // another connection got here first
      try {
        await tx.exec(migration.sql);
        await tx.exec(`PRAGMA user_version = ${migration.version}`);
      } catch (error) {
        throw new MigrationError(db.name, migration.version, migration.name, error);
      }
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return { from, to: await userVersion(db), applied };
}

export async function userVersion(db: Database): Promise<number> {
  return (await db.get<{ user_version: number }>('PRAGMA user_version'))?.user_version ?? 0;
}

function checkSequence(name: string, migrations: readonly Migration[]): void {
  migrations.forEach((migration, i) => {
    if (migration.version !== i + 1) {
      throw new Error(`${name}: migration "${migration.name}" has version ${migration.version}, expected ${i + 1}.`);
    }
  });
}
