// Opens a stack's two databases with their schemas brought up to date.
import { openDatabase, type Database } from './database.ts';
import { migrate, type MigrationReport } from './migrations.ts';
import { MEMORY_MIGRATIONS } from './memory-schema.ts';
import type { SqliteRuntime } from './sqlite-runtime.ts';
import { TRANSCRIPT_MIGRATIONS } from './transcript-schema.ts';

export interface DatabasePaths {
  /** Paths as the VFS sees them (on OPFS: from the origin's root, see `opfsDatabasePath`). */
  transcript: string;
  memory: string;
}

export interface StackDatabases {
  transcript: Database;
  memory: Database;
  migrations: { transcript: MigrationReport; memory: MigrationReport };
}

/**
 * Opens and migrates both databases. Throws SchemaTooNewError (naming the file and both
 * versions) for a file written by a newer Stackdocs; nothing is left open when it throws.
 */
export async function openStackDatabases(
  runtime: SqliteRuntime,
  vfs: string,
  paths: DatabasePaths,
  options: { busyTimeoutMs?: number } = {},
): Promise<StackDatabases> {
  const opened: Database[] = [];
  try {
    const transcript = await openDatabase(runtime, { path: paths.transcript, vfs, name: 'transcript.db', ...options });
    opened.push(transcript);
    const memory = await openDatabase(runtime, { path: paths.memory, vfs, name: 'memory.db', ...options });
    opened.push(memory);
    const migrations = {
      transcript: await migrate(transcript, TRANSCRIPT_MIGRATIONS),
      memory: await migrate(memory, MEMORY_MIGRATIONS),
    };
    return { transcript, memory, migrations };
  } catch (error) {
    await Promise.all(opened.map((db) => db.close().catch(() => {})));
    throw error;
  }
}
