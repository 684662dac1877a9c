// File access for memory/, injected: OPFS in the stack worker (opfs-files.ts), a Map in tests.
import { normalizeStackPath } from '../storage/layout.ts';
import { STACK_LAYOUT } from './layout.ts';

/** Text files relative to one stack's root folder. Paths use `/`; `..` is refused. */
export interface StackFiles {
  /** Returns undefined when the file is absent. */
  readText(path: string): Promise<string | undefined>;
  /** Replaces the file atomically (readers see old or new, never a mix); creates parent folders. */
  writeText(path: string, text: string): Promise<void>;
  /** Creates the folder and its parents; no-op when it exists. */
  makeDir(path: string): Promise<void>;
  /** Entries of a folder in code-point order of name; [] when the folder is absent. */
  list(path: string): Promise<{ name: string; kind: 'file' | 'directory' }[]>;
  /** Removes a file, or a folder with everything in it; no-op when absent. */
  remove(path: string): Promise<void>;
}

/** The memory files' folder (`.os/memory/`): what the loader reads and the processor rewrites. */
export interface MemoryFiles {
  /** Returns undefined when the file is absent. */
  read(name: string): Promise<string | undefined>;
  /** Replaces the file atomically. */
  write(name: string, text: string): Promise<void>;
}

export function memoryFilesOf(files: StackFiles): MemoryFiles {
  const path = (name: string) => {
    if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) throw new Error(`"${name}" is not a memory file name.`);
    return `${STACK_LAYOUT.memory}/${name}`;
  };
  return {
    read: (name) => files.readText(path(name)),
    write: (name, text) => files.writeText(path(name), text),
  };
}

export interface InMemoryStackFiles extends StackFiles {
  /** Every file by normalised path (a live view, for assertions). */
  readonly files: Map<string, string>;
  readonly dirs: Set<string>;
}

/** A StackFiles in a Map, for tests and for Node. */
export function createInMemoryStackFiles(initial: Record<string, string> = {}): InMemoryStackFiles {
  const files = new Map<string, string>();
  const dirs = new Set<string>();
  const addParents = (path: string) => {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  };
  for (const [path, text] of Object.entries(initial)) {
    const clean = normalizeStackPath(path);
    files.set(clean, text);
    addParents(clean);
  }
  return {
    files,
    dirs,
    async readText(path) {
      return files.get(normalizeStackPath(path));
    },
    async writeText(path, text) {
      const clean = normalizeStackPath(path);
      if (dirs.has(clean)) throw new Error(`"${clean}" is a folder.`);
      addParents(clean);
      files.set(clean, text);
    },
    async makeDir(path) {
      const clean = normalizeStackPath(path);
      if (files.has(clean)) throw new Error(`"${clean}" is a file.`);
      addParents(clean);
      if (clean) dirs.add(clean);
    },
    async list(path) {
      const clean = normalizeStackPath(path);
      const prefix = clean ? `${clean}/` : '';
      const entries = new Map<string, 'file' | 'directory'>();
      for (const dir of dirs) {
        if (dir.startsWith(prefix) && !dir.slice(prefix.length).includes('/')) entries.set(dir.slice(prefix.length), 'directory');
      }
      for (const file of files.keys()) {
        if (file.startsWith(prefix) && !file.slice(prefix.length).includes('/')) entries.set(file.slice(prefix.length), 'file');
      }
      return [...entries].map(([name, kind]) => ({ name, kind })).sort(byName);
    },
    async remove(path) {
      const clean = normalizeStackPath(path);
      const inside = (entry: string) => entry === clean || entry.startsWith(`${clean}/`);
      for (const file of [...files.keys()]) if (inside(file)) files.delete(file);
      for (const dir of [...dirs]) if (inside(dir)) dirs.delete(dir);
    },
  };
}

/** Code-point order, like `ls` in the C locale: the same on every machine. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
