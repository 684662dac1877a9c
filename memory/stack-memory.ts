// One stack's memory, opened: layout and templates in place, both databases migrated, and the
// pieces the worker uses (loader, hooks, processor, search, document records) wired together.
import { bootstrapStack, type BootstrapReport } from './bootstrap.ts';
import type { Database } from './database.ts';
import { DbBusyError, DbIoError, DbOpenError } from './db-errors.ts';
import { DocumentsStore } from './documents-store.ts';
import { createMemoryHooks, type MemoryHooks, type MemoryHooksDeps } from './hooks.ts';
import { opfsDatabasePath } from './layout.ts';
import { loadMemoryPrompt, type MemoryPrompt } from './loader.ts';
import { MemoryStore } from './memory-store.ts';
import { openOpfsStackFiles } from './opfs-files.ts';
import { openStackDatabases, type DatabasePaths } from './open-databases.ts';
import { createObservationProcessor, type ObservationProcessor, type ProcessorDeps } from './processor.ts';
import { searchMemory, type MemorySearchResult } from './search.ts';
import { prepareOpfsVfs, type SqliteRuntime } from './sqlite-runtime.ts';
import { memoryFilesOf, type MemoryFiles, type StackFiles } from './stack-files.ts';
import { TasksStore } from './tasks-store.ts';
import { newSessionId, TranscriptStore } from './transcript-store.ts';

export interface StackMemory {
  readonly transcript: TranscriptStore;
  readonly memory: MemoryStore;
  readonly documents: DocumentsStore;
  /** Scheduled tasks and their runs. */
  readonly tasks: TasksStore;
  /** The six memory files (`.os/memory/`). */
  readonly files: MemoryFiles;
  readonly stackFiles: StackFiles;
  readonly bootstrap: BootstrapReport;
  /** The memory section of the system prompt, built fresh. Never throws. */
  loadPrompt(): Promise<MemoryPrompt>;
  /** search_memory: BM25-ranked learnings; any text is a valid query. */
  search(query: string, limit?: number): Promise<MemorySearchResult[]>;
  createProcessor(options: Omit<ProcessorDeps, 'transcript' | 'memory' | 'files'>): ObservationProcessor;
  /**
   * Starts a session and returns hooks bound to it (counting turns already waiting). Its record
   * is written with its first turn: opening a stack writes nothing to transcript.db (a write is a
   * journal and two flushes to disk, on the opening's way), nor leaves an empty session behind.
   */
  startSession(options: StartSessionOptions): Promise<{ sessionId: string; hooks: MemoryHooks }>;
  /**
   * Consistent copies of both databases at `into` (`VACUUM INTO`, after queued work): what an
   * export carries, never the live files. The targets must not exist yet.
   */
  snapshot(into: DatabasePaths): Promise<void>;
  /** Consistent copies of both databases in memory (a checkpoint's): no file is made. */
  copies(): Promise<{ transcript: Uint8Array; memory: Uint8Array }>;
  /** Closes both databases (after queued work). */
  close(): Promise<void>;
}

export interface StartSessionOptions {
  processor: ObservationProcessor;
  sessionId?: string;
  batchEvery?: number;
  onError?: MemoryHooksDeps['onError'];
}

export interface OpenStackMemoryOptions {
  runtime: SqliteRuntime;
  vfs: string;
  paths: DatabasePaths;
  files: StackFiles;
  busyTimeoutMs?: number;
  now?: () => number;
  /** The stack folder was bootstrapped already (beside the loading of SQLite): its report. */
  bootstrapped?: BootstrapReport;
}

/** Bootstraps the stack folder, then opens and migrates both databases. */
export async function openStackMemory(options: OpenStackMemoryOptions): Promise<StackMemory> {
  const now = options.now ?? Date.now;
  const bootstrap = options.bootstrapped ?? (await bootstrapStack(options.files));
  const dbs = await openStackDatabases(options.runtime, options.vfs, options.paths, {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
  const transcript = new TranscriptStore(dbs.transcript, now);
  const memory = new MemoryStore(dbs.memory, now);
  const documents = new DocumentsStore(dbs.memory, now);
  const tasks = new TasksStore(dbs.memory, now);
  const files = memoryFilesOf(options.files);

  return {
    transcript,
    memory,
    documents,
    tasks,
    files,
    stackFiles: options.files,
    bootstrap,
    loadPrompt: () => loadMemoryPrompt({ files, memory }),
    search: (query, limit) => searchMemory(dbs.memory, query, limit),
    createProcessor: (deps) => createObservationProcessor({ now, ...deps, transcript, memory, files }),
    async startSession({ processor, sessionId = newSessionId(), batchEvery, onError }) {
      const waiting = await transcript.countUnprocessed();
      let recorded: Promise<unknown> | null = null;
      const record = () =>
        (recorded ??= transcript.startSession(sessionId).catch((error: unknown) => {
          recorded = null; // tried again with the next turn
          throw error;
        }));
      const hooks = createMemoryHooks({
        transcript: {
          appendObservation: async (input) => (await record(), transcript.appendObservation(input)),
          // A session that wrote no turn has no record to close.
          endSession: async (id) => {
            if (recorded) await recorded.then(() => transcript.endSession(id));
          },
        },
        processor,
        sessionId,
        initialTurnCount: waiting,
        ...(batchEvery === undefined ? {} : { batchEvery }),
        ...(onError ? { onError } : {}),
      });
      return { sessionId, hooks };
    },
    async snapshot(into) {
      await dbs.transcript.exec(`VACUUM INTO ${sqlString(into.transcript)}`);
      await dbs.memory.exec(`VACUUM INTO ${sqlString(into.memory)}`);
    },
    async copies() {
      const vfs = await options.runtime.registerVfs('memory', COPIES_VFS);
      const copy = async (db: Database, name: string) => {
        const path = `/${crypto.randomUUID()}/${name}.db`;
        try {
          await db.exec(`VACUUM INTO ${sqlString(`file:${path}?vfs=${vfs}`)}`);
          const bytes = options.runtime.takeMemoryFile(vfs, path);
          if (!bytes) throw new Error(`the copy of ${name}.db was not made`);
          return bytes;
        } finally {
          options.runtime.takeMemoryFile(vfs, path); // what a failed copy left
        }
      };
      return { transcript: await copy(dbs.transcript, 'transcript'), memory: await copy(dbs.memory, 'memory') };
    },
    async close() {
      await Promise.all([dbs.transcript.close(), dbs.memory.close()]);
    },
  };
}

/** The memory VFS a checkpoint's copies of the databases are made on. */
const COPIES_VFS = 'copies';

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * The stack worker's entry point: the stack's OPFS folder `stacks/<stackId>/` for files and
 * OPFSCoopSyncVFS (registered here as "opfs") for the databases. Dedicated workers only.
 */
export async function openOpfsStackMemory(options: {
  /** SQLite, or its loading: the stack folder is laid out meanwhile. */
  runtime: SqliteRuntime | Promise<SqliteRuntime>;
  stackId: string;
  busyTimeoutMs?: number;
  now?: () => number;
}): Promise<StackMemory> {
  prepareOpfsVfs();
  const files = await openOpfsStackFiles(options.stackId);
  // Settled either way: a failed layout is done again (and its error met) by each try below.
  const laidOut = bootstrapStack(files).catch(() => undefined);
  const runtime = await options.runtime;
  const vfs = await runtime.registerVfs('opfs');
  const bootstrapped = await laidOut;
  return openWhenReleased(async () =>
    openStackMemory({
      runtime,
      vfs,
      files,
      paths: { transcript: opfsDatabasePath(options.stackId, 'transcript'), memory: opfsDatabasePath(options.stackId, 'memory') },
      ...(bootstrapped ? { bootstrapped } : {}),
      ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
      ...(options.now ? { now: options.now } : {}),
    }),
  );
}

/**
 * Another connection (a second tab's worker, or one just terminated by a reload, which releases
 * its OPFS access handles asynchronously) can hold the files for a moment, and opening then fails
 * with an I/O or busy error; two workers laying out one new stack at once can trip over each
 * other's files. Opening (bootstrap included, which is idempotent) is retried with backoff.
 */
export async function openWhenReleased<T>(open: () => Promise<T>, deadlineMs = 10_000): Promise<T> {
  const started = Date.now();
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    try {
      return await open();
    } catch (error) {
      // NotFoundError: another worker bootstrapping the same new stack replaced a file mid-read.
      const transient = error instanceof DbOpenError || error instanceof DbBusyError || error instanceof DbIoError || (error instanceof DOMException && error.name === 'NotFoundError');
      if (!transient || Date.now() - started > deadlineMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
