// What a checkpoint holds of a stack, read from its folder: every file of the stack but its own
// record and secrets, the checkpoints themselves and what is made beside the databases; the
// databases as consistent copies; the computer's four files (disk overlay, its map, the saved
// state and machine.json) as the VM worker captured them, or as they lie when it is stopped.
import { isPartialWrite } from '../../storage/atomic-write.ts';
import { JOURNAL } from '../../vm/opfs-workspace.ts';
import type { VmCapture } from '../../vm/protocol.ts';
import { NEVER_EXPORTED } from '../stack-file/format.ts';
import { CHANGE_CHUNK } from '../../vm/disk/overlay.ts';
import { CHUNK_SIZE, type CheckpointFile, type CheckpointSource, type StateDigest } from './store.ts';

// The VM worker copies the disk in the chunks a checkpoint keeps.
if (CHANGE_CHUNK !== CHUNK_SIZE) throw new Error('a checkpoint chunk must be the overlay change chunk');

export const VM_DIR = '.os/vm';
const VM_FILES = ['machine.json', 'state.bin', 'overlay.map', 'overlay.data', JOURNAL] as const;
/** Paths a checkpoint never holds, and a restore never touches. */
const NEVER_KEPT = [...NEVER_EXPORTED, /^\.os\/checkpoints(\/|$)/, /^\.os\/vm\//];

export const isUserFile = (path: string) => !path.startsWith('.os/');
export const isComputerFile = (path: string) => path.startsWith(`${VM_DIR}/`);
export const isDatabaseFile = (path: string) => /^\.os\/memory\/[^/]+\.db$/.test(path);

/**
 * Whether a restore leaves this path of the stack as it is: the stack's record, its secrets, where
 * it came from and what its owner allowed (trust.json: a stack from a file stays restricted through
 * a restore), and the checkpoints.
 */
export function keptThroughRestore(path: string): boolean {
  return /^\.os\/config\/(stack|secrets|trust)\.json$/.test(path) || /^\.os\/checkpoints(\/|$)/.test(path);
}

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };

/** Files up to this size are read at once (each read of a part waits its turn in a busy worker). */
const READ_WHOLE = 32 * 1024 * 1024;

/** A File read in chunks; `stamp` lets an unchanged file be taken from the last checkpoint unread. */
function fileSource(path: string, file: File): CheckpointSource {
  let whole: Promise<Uint8Array> | null = null;
  return {
    path,
    size: file.size,
    stamp: `${file.size}:${file.lastModified}`,
    read: async (at, length) => {
      if (file.size > READ_WHOLE) return new Uint8Array(await file.slice(at, at + length).arrayBuffer());
      whole ??= file.arrayBuffer().then((buffer) => new Uint8Array(buffer));
      return (await whole).subarray(at, at + length);
    },
  };
}

function bytesSource(path: string, bytes: Uint8Array, contentDefined = false): CheckpointSource {
  return { path, size: bytes.byteLength, read: async (at, length) => bytes.subarray(at, at + length), ...(contentDefined ? { bytes } : {}) };
}

/**
 * Every file under `dir`, in the order of the folder's listing. Each file's details and each
 * folder are asked for at once: one after another, each waits its turn in a busy storage.
 */
async function walk(dir: FileSystemDirectoryHandle, prefix: string): Promise<CheckpointSource[]> {
  const found: Promise<CheckpointSource[]>[] = [];
  for await (const [name, handle] of (dir as unknown as Entries).entries()) {
    const path = prefix ? `${prefix}/${name}` : name;
    if (handle.kind === 'directory') {
      if (!NEVER_KEPT.some((rule) => rule.test(`${path}/`))) found.push(walk(handle as FileSystemDirectoryHandle, path));
      continue;
    }
    if (isPartialWrite(name) || NEVER_KEPT.some((rule) => rule.test(path))) continue;
    found.push((handle as FileSystemFileHandle).getFile().then((file) => [fileSource(path, file)]));
  }
  return (await Promise.all(found)).flat();
}

async function fileIn(dir: FileSystemDirectoryHandle, path: string): Promise<File | null> {
  const parts = path.split('/');
  try {
    let folder = dir;
    for (const part of parts.slice(0, -1)) folder = await folder.getDirectoryHandle(part);
    return await (await folder.getFileHandle(parts.at(-1)!)).getFile();
  } catch {
    return null;
  }
}

/** Consistent copies of the stack's two databases (VACUUM INTO), in memory. */
export interface DatabaseCopies {
  transcript: Uint8Array;
  memory: Uint8Array;
}

export interface SourceOptions {
  /** The databases' consistent copies, taken in place of the live files; null: the live ones (a still stack). */
  databases: DatabaseCopies | null;
  /** What the running computer's VM worker captured; null: its files are read as they lie. */
  capture: VmCapture | null;
  /** The newest checkpoint's computer files (a state unchanged since is taken from it). */
  previous?: Record<string, CheckpointFile>;
  /** The captured state's cuts and hashes, begun as it arrived (store.ts digestState). */
  stateDigest?: Promise<StateDigest>;
}

/** Every file a checkpoint of the stack in `stack` holds. */
export async function checkpointSources(stack: FileSystemDirectoryHandle, options: SourceOptions): Promise<CheckpointSource[]> {
  const sources = await walk(stack, '');
  for (const db of ['transcript', 'memory'] as const) {
    const live = `.os/memory/${db}.db`;
    if (options.databases) {
      sources.push(bytesSource(live, options.databases[db]));
      continue;
    }
    const file = await fileIn(stack, live);
    if (file) sources.push({ ...fileSource(live, file), stamp: undefined });
  }
  if (options.capture) {
    sources.push(...capturedComputer(options.capture, options.previous, options.stateDigest));
    // Which /workspace files the guest holds: taken with the save the capture made, or written by the last one.
    const journal = options.capture.journal ?? (options.capture.meta.state ? await fileIn(stack, `${VM_DIR}/${JOURNAL}`) : null);
    if (journal instanceof Uint8Array) sources.push(bytesSource(`${VM_DIR}/${JOURNAL}`, journal));
    else if (journal) sources.push(fileSource(`${VM_DIR}/${JOURNAL}`, journal));
  } else sources.push(...(await stillComputer(stack)));
  return sources;
}

function capturedComputer(capture: VmCapture, previous: Record<string, CheckpointFile> | undefined, digest: Promise<StateDigest> | undefined): CheckpointSource[] {
  const sources: CheckpointSource[] = [];
  const lastState = previous?.[`${VM_DIR}/state.bin`];
  const hasState = capture.state !== null || (capture.stateUnchanged && lastState !== undefined);
  // Without its saved state, the restored computer cold boots from the disk.
  const meta = hasState ? capture.meta : { ...capture.meta, state: null, disk: null };
  sources.push(bytesSource(`${VM_DIR}/machine.json`, new TextEncoder().encode(JSON.stringify(meta))));
  // The state is known by its generation: one unchanged since the last checkpoint is not read again.
  const stamp = `generation:${capture.meta.state}`;
  if (capture.state) sources.push({ ...bytesSource(`${VM_DIR}/state.bin`, capture.state, true), stamp, ...(digest ? { digest } : {}) });
  else if (hasState && lastState) {
    sources.push({ path: `${VM_DIR}/state.bin`, size: lastState.size, stamp, read: () => Promise.reject(new Error('the saved state was to be unchanged since the last checkpoint')) });
  }
  sources.push(bytesSource(`${VM_DIR}/overlay.map`, capture.map));
  const chunks = new Map(capture.chunks.map((chunk) => [chunk.index, chunk.bytes]));
  sources.push({
    path: `${VM_DIR}/overlay.data`,
    size: capture.dataSize,
    unchanged: (index) => !capture.full && !chunks.has(index),
    read: async (at, length) => {
      const bytes = chunks.get(at / CHUNK_SIZE);
      if (!bytes || bytes.byteLength < length) throw new Error(`the disk's bytes at ${at} were not captured`);
      return bytes.subarray(0, length);
    },
  });
  return sources;
}

/** The computer's files of a stopped computer: the saved state only when the disk still matches it. */
async function stillComputer(stack: FileSystemDirectoryHandle): Promise<CheckpointSource[]> {
  const sources: CheckpointSource[] = [];
  const files = new Map<string, File>();
  for (const name of VM_FILES) {
    const file = await fileIn(stack, `${VM_DIR}/${name}`);
    if (file) files.set(name, file);
  }
  const metaFile = files.get('machine.json');
  if (!metaFile) return sources;
  let meta: { state?: unknown; disk?: unknown } = {};
  try {
    meta = JSON.parse(await metaFile.text()) as typeof meta;
  } catch {
    // A torn machine.json trusts nothing: the computer cold boots from the disk.
  }
  const stateCounts = typeof meta.state === 'string' && meta.state === meta.disk;
  if (stateCounts) sources.push(fileSource(`${VM_DIR}/machine.json`, metaFile));
  else sources.push(bytesSource(`${VM_DIR}/machine.json`, new TextEncoder().encode(JSON.stringify({ ...meta, state: null, disk: null }))));
  for (const name of ['state.bin', 'overlay.map', 'overlay.data', JOURNAL] as const) {
    const file = files.get(name);
    if (!file || ((name === 'state.bin' || name === JOURNAL) && !stateCounts)) continue;
    if (name === 'state.bin') {
      // Stamped and cut as a captured state is, so the same state is recognised either way.
      sources.push({ ...bytesSource(`${VM_DIR}/${name}`, new Uint8Array(await file.arrayBuffer()), true), stamp: `generation:${String(meta.state)}` });
    } else sources.push(fileSource(`${VM_DIR}/${name}`, file));
  }
  return sources;
}
