// /workspace: the stack's user files, which live in OPFS (the truth), shown to the guest through
// v86's in-memory 9p filesystem (mounted by rc.sysinit) and mirrored back on every change. See
// vm/README.md "/workspace" for why.
//
// - Guest -> OPFS: the 9p server changes files only through the FS instance's methods; wrapping
//   them marks what changed, and `flush()` writes those files (and deletions, renames) to the
//   store. The VM worker flushes after every exec, on a short timer, and before saving a state.
// - Host -> guest: the stack worker writes OPFS and then calls `hostChanged(path)`, which loads
//   the file into the FS. The guest mounts with cache=none, so it sees the change at once.
// - Start (cold boot or wake): `reconcile()` makes the FS match the store. A saved state carries
//   its own copy of the FS; the journal (path -> the store's lastModified when last in sync)
//   lets a wake reload only what changed since, and is trusted only for its own generation.

/** The part of v86's 9p `FS` used here (lib/filesystem.js; methods on its prototype). */
export interface Fs9pLike {
  inodes: { mode: number; size: number; mtime: number; direntries?: Map<string, number> }[];
  Search(parentId: number, name: string): number;
  GetChildren(dirId: number): string[];
  IsDirectory(id: number): boolean;
  GetInode(id: number): { mode: number; size: number; mtime: number };
  CreateDirectory(name: string, parentId: number): number;
  CreateBinaryFile(name: string, parentId: number, data: Uint8Array): Promise<number>;
  Read(id: number, offset: number, count: number): Promise<Uint8Array | null>;
  Unlink(parentId: number, name: string): number;
  ChangeSize(id: number, size: number): Promise<void>;
  Write(id: number, offset: number, count: number, data: Uint8Array): Promise<void>;
  set_data(id: number, data: Uint8Array): Promise<void>;
}

export interface WorkspaceEntry {
  path: string;
  kind: 'file' | 'dir';
  /** ms since the epoch, as the store reports it (OPFS: File.lastModified). */
  lastModified: number;
  size: number;
}

/** Where the files really live (OPFS in the browser; a directory or a Map in tests). */
export interface WorkspaceStore {
  /** Every entry, parents before children; the system space (.os) left out. */
  list(): Promise<WorkspaceEntry[]>;
  read(path: string): Promise<Uint8Array | null>;
  /** Creates parents; returns the file's lastModified afterwards. */
  write(path: string, bytes: Uint8Array): Promise<number>;
  mkdir(path: string): Promise<void>;
  /** Removes a file or a whole folder; absent is fine. */
  remove(path: string): Promise<void>;
  stat(path: string): Promise<WorkspaceEntry | null>;
}

export interface WorkspaceJournal {
  generation: string | null;
  files: Record<string, number>;
}

const ROOT = 0;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

type Node = { id: number; kind: 'file' | 'dir' };

/** A path the mirror may carry: relative, no `..`, never the system space. */
export function isWorkspacePath(path: string): boolean {
  if (!path || path.startsWith('/') || path.includes('\\')) return false;
  const parts = path.split('/');
  return parts.every((p) => p !== '' && p !== '.' && p !== '..') && parts[0] !== '.os';
}

export class WorkspaceMirror {
  private fs: Fs9pLike | null = null;
  private dirtyIds = new Set<number>();
  private structureChanged = false;
  /** Path -> node as of the last flush/reconcile (to see deletions and renames). */
  private known = new Map<string, Node>();
  /** Path -> the store's lastModified when the FS and the store last agreed on that file. */
  private journal = new Map<string, number>();
  /** While the mirror itself writes the FS, the wrappers stay quiet (no echo to the store). */
  private applying = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** Files the store could not take (e.g. quota); reported, retried at the next flush. */
  lastError: Error | null = null;

  constructor(private readonly store: WorkspaceStore) {}

  /** Watches a new emulator's FS (after a boot or wake). */
  attach(fs: Fs9pLike): void {
    this.fs = fs;
    this.dirtyIds.clear();
    this.structureChanged = true;
    const mark = (id: number) => {
      if (!this.applying) this.dirtyIds.add(id);
    };
    const structure = () => {
      if (!this.applying) this.structureChanged = true;
    };
    // Every change of a file's bytes (Write, ChangeSize, CreateBinaryFile) ends in set_data.
    const setData = fs.set_data;
    fs.set_data = async function (this: Fs9pLike, id: number, data: Uint8Array) {
      mark(id);
      return setData.call(this, id, data);
    };
    // Creating, renaming, linking and unlinking change paths, not data: a structural change.
    for (const name of ['CreateFile', 'CreateDirectory', 'CreateSymlink', 'CreateNode', 'Rename', 'Link', 'Unlink']) {
      const method = (fs as unknown as Record<string, (...a: unknown[]) => unknown>)[name];
      if (typeof method !== 'function') continue;
      (fs as unknown as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
        structure();
        return method.apply(this, args);
      };
    }
  }

  detach(): void {
    this.fs = null;
  }

  /** True when the guest changed something the store has not seen yet. */
  get pending(): boolean {
    return this.dirtyIds.size > 0 || this.structureChanged;
  }

  /** Makes the FS match the store. `journal` (from the saved state) avoids reloading unchanged files. */
  reconcile(journal: WorkspaceJournal | null, generation: string | null): Promise<{ loaded: number; removed: number; bytes: number }> {
    return this.serial(async () => {
      const fs = this.requireFs();
      const trusted = journal && journal.generation !== null && journal.generation === generation ? journal.files : {};
      const entries = await this.store.list();
      const wanted = new Map(entries.filter((e) => isWorkspacePath(e.path)).map((e) => [e.path, e]));
      const present = this.walk(fs);
      let loaded = 0;
      let removed = 0;
      let bytes = 0;
      this.applying = true;
      try {
        // Deepest first, so folders are empty when they go.
        for (const [path, node] of [...present].sort((a, b) => b[0].length - a[0].length)) {
          const entry = wanted.get(path);
          if (entry && entry.kind === node.kind) continue;
          this.removeFromFs(fs, path);
          removed++;
        }
        this.journal.clear();
        for (const entry of wanted.values()) {
          if (entry.kind === 'dir') {
            this.ensureDir(fs, entry.path);
            continue;
          }
          const node = present.get(entry.path);
          if (node && node.kind === 'file' && trusted[entry.path] === entry.lastModified && fs.GetInode(node.id).size === entry.size) {
            this.journal.set(entry.path, entry.lastModified);
            continue;
          }
          const data = await this.store.read(entry.path);
          if (!data) continue;
          await this.putFile(fs, entry.path, data);
          this.journal.set(entry.path, entry.lastModified);
          loaded++;
          bytes += data.length;
        }
      } finally {
        this.applying = false;
      }
      this.known = this.walk(fs);
      this.dirtyIds.clear();
      this.structureChanged = false;
      return { loaded, removed, bytes };
    });
  }

  /** The stack worker changed `path` in the store (written, or removed when absent). */
  hostChanged(path: string): Promise<void> {
    return this.serial(async () => {
      if (!isWorkspacePath(path)) throw new Error(`"${path}" is not a workspace path`);
      const fs = this.fs;
      if (!fs) return; // not running: the next reconcile picks it up
      const entry = await this.store.stat(path);
      this.applying = true;
      try {
        if (!entry) {
          if (this.lookup(fs, path) !== -1) this.removeFromFs(fs, path);
          this.journal.delete(path);
        } else if (entry.kind === 'dir') {
          this.ensureDir(fs, path);
        } else {
          const data = await this.store.read(path);
          if (data) {
            await this.putFile(fs, path, data);
            this.journal.set(path, entry.lastModified);
          }
        }
      } finally {
        this.applying = false;
      }
      this.known = this.walk(fs);
    });
  }

  /** Writes what the guest changed to the store. Resolves once the store has it. */
  flush(): Promise<{ written: number; removed: number }> {
    return this.serial(async () => {
      const fs = this.fs;
      if (!fs || !this.pending) return { written: 0, removed: 0 };
      const dirty = this.dirtyIds;
      this.dirtyIds = new Set();
      this.structureChanged = false;
      const now = this.walk(fs);
      let written = 0;
      let removed = 0;
      try {
        for (const [path, node] of this.known) {
          const current = now.get(path);
          if (current && current.kind === node.kind) continue;
          // Gone, or a file became a folder: remove; a parent's removal takes its children.
          if (!this.hasGoneParent(path, now)) {
            await this.store.remove(path);
            removed++;
          }
          for (const key of this.journal.keys()) if (key === path || key.startsWith(`${path}/`)) this.journal.delete(key);
        }
        for (const [path, node] of now) {
          const before = this.known.get(path);
          if (node.kind === 'dir') {
            if (!before) await this.store.mkdir(path);
            continue;
          }
          if (before && before.id === node.id && !dirty.has(node.id)) continue;
          const size = fs.GetInode(node.id).size;
          const data = size > 0 ? ((await fs.Read(node.id, 0, size)) ?? new Uint8Array()) : new Uint8Array();
          const lastModified = await this.store.write(path, data.slice(0, size));
          this.journal.set(path, lastModified);
          written++;
        }
        this.lastError = null;
      } catch (error) {
        // Keep what could not be written for the next flush; say so.
        for (const id of dirty) this.dirtyIds.add(id);
        this.structureChanged = true;
        this.lastError = error instanceof Error ? error : new Error(String(error));
        throw this.lastError;
      }
      this.known = now;
      return { written, removed };
    });
  }

  /** The journal to save beside a state of `generation`. */
  snapshotJournal(generation: string): WorkspaceJournal {
    return { generation, files: Object.fromEntries(this.journal) };
  }

  /** The host's read of a workspace file as the guest sees it now (flushes first). */
  async readFile(path: string): Promise<Uint8Array | null> {
    await this.flush();
    return this.store.read(path);
  }

  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private requireFs(): Fs9pLike {
    if (!this.fs) throw new Error('the workspace is not attached to a running computer');
    return this.fs;
  }

  private hasGoneParent(path: string, now: Map<string, Node>): boolean {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (this.known.get(parent)?.kind === 'dir' && now.get(parent)?.kind !== 'dir') return true;
    }
    return false;
  }

  /** Every regular file and folder under the root, by path (symlinks, devices left out). */
  private walk(fs: Fs9pLike): Map<string, Node> {
    const out = new Map<string, Node>();
    const visit = (dirId: number, prefix: string) => {
      for (const name of fs.GetChildren(dirId)) {
        const path = prefix ? `${prefix}/${name}` : name;
        if (!isWorkspacePath(path)) continue;
        const id = fs.Search(dirId, name);
        if (id < 0) continue;
        const type = fs.GetInode(id).mode & S_IFMT;
        if (type === S_IFDIR) {
          out.set(path, { id, kind: 'dir' });
          visit(id, path);
        } else if (type === S_IFREG) {
          out.set(path, { id, kind: 'file' });
        }
      }
    };
    visit(ROOT, '');
    return out;
  }

  private lookup(fs: Fs9pLike, path: string): number {
    let id = ROOT;
    for (const part of path.split('/')) {
      id = fs.Search(id, part);
      if (id < 0) return -1;
    }
    return id;
  }

  private ensureDir(fs: Fs9pLike, path: string): number {
    let id = ROOT;
    for (const part of path.split('/')) {
      let next = fs.Search(id, part);
      if (next >= 0 && !fs.IsDirectory(next)) {
        this.removeFromFs(fs, path.slice(0, path.indexOf(part) + part.length));
        next = -1;
      }
      id = next >= 0 ? next : fs.CreateDirectory(part, id);
    }
    return id;
  }

  private async putFile(fs: Fs9pLike, path: string, data: Uint8Array): Promise<void> {
    const slash = path.lastIndexOf('/');
    const parent = slash < 0 ? ROOT : this.ensureDir(fs, path.slice(0, slash));
    const name = path.slice(slash + 1);
    const existing = fs.Search(parent, name);
    if (existing >= 0 && !fs.IsDirectory(existing)) {
      // Keep the inode (a guest process may hold it open): replace its bytes.
      await fs.set_data(existing, new Uint8Array(data));
      fs.inodes[existing]!.size = data.length;
      fs.inodes[existing]!.mtime = Math.round(Date.now() / 1000);
      return;
    }
    if (existing >= 0) this.removeFromFs(fs, path);
    await fs.CreateBinaryFile(name, parent, data);
  }

  private removeFromFs(fs: Fs9pLike, path: string): void {
    const slash = path.lastIndexOf('/');
    const parentId = slash < 0 ? ROOT : this.lookup(fs, path.slice(0, slash));
    if (parentId < 0) return;
    const name = path.slice(slash + 1);
    const id = fs.Search(parentId, name);
    if (id < 0) return;
    if (fs.IsDirectory(id)) for (const child of fs.GetChildren(id)) this.removeFromFs(fs, `${path}/${child}`);
    fs.Unlink(parentId, name);
  }
}

