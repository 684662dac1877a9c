// Loads the wa-sqlite WebAssembly module once per worker and registers the file systems
// (VFS) databases open on: OPFSCoopSyncVFS in the stack worker, MemoryVFS in Node tests.
import * as SQLite from '@journeyapps/wa-sqlite';
import SQLiteESMFactory from '@journeyapps/wa-sqlite/dist/wa-sqlite.mjs';

/** The sync (non-Asyncify) build: OPFSCoopSyncVFS and MemoryVFS are synchronous VFSs. */
export interface SqliteRuntime {
  readonly sqlite3: SQLiteAPI;
  /** The Emscripten module, which VFS classes are constructed with. */
  readonly module: unknown;
  /** SQLite's own version, e.g. "3.53.0". */
  readonly version: string;
  /** Names of the VFSs registered so far, with their kind. */
  readonly vfs: ReadonlyMap<string, VfsKind>;
  /** Registers (once per name) a VFS of the given kind and returns its name. */
  registerVfs(kind: VfsKind, name?: string): Promise<string>;
  /**
   * Takes a file out of a memory VFS: its bytes, and it is gone from there. Null when there is
   * no such file.
   */
  takeMemoryFile(vfsName: string, path: string): Uint8Array | null;
  /** Registers a VFS built by the caller (e.g. a test double); returns its name. */
  adoptVfs(vfs: SQLiteVFS, kind: VfsKind): string;
  /**
   * The exception behind a VFS's last failed call (wa-sqlite keeps it as `lastError`; SQLite
   * itself only learns "I/O error"), then forgets it. Undefined when there is none.
   */
  takeVfsError(name: string): unknown;
  /**
   * Runs one SQLite call (with the VFS work it waits for) while no other connection of this
   * module runs one. wa-sqlite lists a VFS's pending asynchronous work once per module, and runs a
   * call again when work is listed after it returned: a statement on one connection that finished
   * just as another connection's call listed work was run twice (an INSERT stored twice, a BEGIN
   * met "cannot start a transaction within a transaction").
   */
  exclusive<T>(op: () => Promise<T>): Promise<T>;
}

/**
 * `memory`: files live in an ArrayBuffer; no locking, so one connection per file (tests, benches).
 * `opfs`: OPFSCoopSyncVFS; files are real OPFS files under the origin's root; dedicated workers
 * only; several connections (tabs) take turns holding the file through Web Locks.
 */
export type VfsKind = 'memory' | 'opfs';

export interface LoadSqliteOptions {
  /** The wasm bytes; Node has no fetch for file URLs, so tests pass the file's contents. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where the browser fetches the wasm from, e.g. a Vite `?url` import of `dist/wa-sqlite.wasm`. */
  wasmUrl?: string;
}

export async function loadSqlite(options: LoadSqliteOptions = {}): Promise<SqliteRuntime> {
  const config: Record<string, unknown> = {};
  if (options.wasmBinary) config.wasmBinary = options.wasmBinary;
  if (options.wasmUrl) config.locateFile = () => options.wasmUrl;
  const module = await SQLiteESMFactory(config);
  const sqlite3 = SQLite.Factory(module);
  const registered = new Map<string, VfsKind>();
  const instances = new Map<string, SQLiteVFS>();
  const pending = new Map<string, Promise<string>>();
  let turn: Promise<unknown> = Promise.resolve();

  async function create(kind: VfsKind, name: string): Promise<string> {
    const vfs = kind === 'memory' ? await createMemoryVfs(name, module) : await createOpfsVfs(name, module);
    sqlite3.vfs_register(vfs, false);
    instances.set(name, vfs);
    registered.set(name, kind);
    return name;
  }

  return {
    sqlite3,
    module,
    version: sqlite3.libversion(),
    vfs: registered,
    registerVfs(kind, name = kind) {
      const known = registered.get(name);
      if (known && known !== kind) return Promise.reject(new Error(`VFS "${name}" is already registered as ${known}.`));
      // Concurrent callers share one registration.
      let registration = pending.get(name);
      if (!registration) {
        registration = create(kind, name);
        pending.set(name, registration);
        registration.catch(() => pending.delete(name));
      }
      return registration;
    },
    takeMemoryFile(vfsName, path) {
      if (registered.get(vfsName) !== 'memory') throw new Error(`VFS "${vfsName}" is not a memory VFS.`);
      // MemoryVFS keeps each file as an ArrayBuffer (grown ahead of its size) by its path.
      const files = (instances.get(vfsName) as unknown as { mapNameToFile: Map<string, { size: number; data: ArrayBuffer }> }).mapNameToFile;
      const file = files.get(path);
      if (!file) return null;
      files.delete(path);
      return new Uint8Array(file.data, 0, file.size);
    },
    adoptVfs(vfs, kind) {
      if (registered.has(vfs.name)) throw new Error(`VFS "${vfs.name}" is already registered.`);
      sqlite3.vfs_register(vfs, false);
      registered.set(vfs.name, kind);
      instances.set(vfs.name, vfs);
      return vfs.name;
    },
    exclusive(op) {
      const next = turn.then(op);
      turn = next.catch(() => {});
      return next;
    },
    takeVfsError(name) {
      const vfs = instances.get(name) as { lastError?: unknown } | undefined;
      const error = vfs?.lastError ?? undefined;
      if (vfs && 'lastError' in vfs) vfs.lastError = null;
      return error;
    },
  };
}

interface VfsFactory {
  create(name: string, module: unknown): Promise<SQLiteVFS>;
}

async function createMemoryVfs(name: string, module: unknown): Promise<SQLiteVFS> {
  const { MemoryVFS } = await import('@journeyapps/wa-sqlite/src/examples/MemoryVFS.js');
  return (MemoryVFS as unknown as VfsFactory).create(name, module);
}

// Imported lazily: the class touches navigator.locks and BroadcastChannel, which Node lacks.
const opfsVfsModule = () => import('@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js');

let opfsPrepared: Promise<void> | null = null;

/**
 * What `registerVfs('opfs')` waits for before it starts the VFS (its class's module, and the sweep
 * below), begun now: a stack worker calls this beside the wasm's loading, so neither waits for
 * the other. Its outcome is met by the first registration.
 */
export function prepareOpfsVfs(): void {
  opfsPrepared ??= Promise.all([opfsVfsModule(), sweepTemporaryFolders()]).then(() => {});
  opfsPrepared.catch(() => {}); // met, and thrown, by the registration
}

async function createOpfsVfs(name: string, module: unknown): Promise<SQLiteVFS> {
  const { OPFSCoopSyncVFS } = await opfsVfsModule();
  // A new OPFSCoopSyncVFS first deletes the temporary folders (`.ahp-*`) of workers that are
  // gone, and fails with NotFoundError when another worker starting at the same moment deleted
  // one first. So the sweep is done here beforehand, tolerating that, and a creation that still
  // meets it (a worker gone in between) starts again.
  for (let attempt = 1; ; attempt++) {
    const prepared = opfsPrepared;
    opfsPrepared = null;
    await (prepared ?? sweepTemporaryFolders());
    try {
      return await OPFSCoopSyncVFS.create(name, module);
    } catch (error) {
      if (attempt >= 5 || (error as { name?: unknown })?.name !== 'NotFoundError') throw error;
    }
  }
}

/** OPFSCoopSyncVFS's own clean-up, by its protocol (a folder whose Web Lock is free is unused). */
async function sweepTemporaryFolders(): Promise<void> {
  const root = await navigator.storage.getDirectory();
  const names: string[] = [];
  for await (const entry of (root as unknown as { values(): AsyncIterable<FileSystemHandle> }).values()) {
    if (entry.kind === 'directory' && entry.name.startsWith('.ahp-')) names.push(entry.name);
  }
  for (const folder of names) {
    await navigator.locks.request(folder, { ifAvailable: true }, async (lock) => {
      if (!lock) return; // in use
      await root.removeEntry(folder, { recursive: true }).catch((error: unknown) => {
        if ((error as { name?: unknown })?.name !== 'NotFoundError') throw error;
      });
    });
  }
}
