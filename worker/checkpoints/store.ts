// A stack's checkpoints: the whole stack at moments in time, kept in `.os/checkpoints/` beside it.
// Every file is cut into 64 KiB chunks named by their SHA-256; a chunk already held by an earlier
// checkpoint is not stored again, so a checkpoint costs only what changed since the ones kept —
// the computer's memory pages and disk blocks a mission touched, the files it wrote.
//
//   .os/checkpoints/packs/<id>.pack   the chunks new in checkpoint <id>, each compressed (zstd;
//                                     deflate in older packs) when that pays, one after another
//                                     (written once, never changed)
//   .os/checkpoints/<id>.json         the checkpoint: every file with its size and its chunks
//                                     (hash, pack, offset, stored length, how it is packed)
//
// A checkpoint's JSON is written last: one cut short (a killed tab) leaves only a pack nobody
// names, which the next open removes. Pruning removes the JSON first, then every pack no kept
// checkpoint names.
import { CodecUnavailableError, packer, STORED, unpack, ZSTD, type Packing } from './codec.ts';
import { FIXED_SPAN, fixedSpans, stateSpans } from './spans.ts';

export const CHUNK_SIZE = FIXED_SPAN;
export const CHECKPOINTS_DIR = 'checkpoints';
const PACKS = 'packs';
const FORMAT = 1;

/** Where a chunk's bytes are: [hash, pack id, offset in the pack, stored bytes, how they are packed (codec.ts)]. */
export type ChunkRef = [hash: string, pack: string, at: number, length: number, packing: Packing];

export interface CheckpointFile {
  size: number;
  /** What the file was when it was read (size and modification time); equal means unchanged. */
  stamp?: string;
  chunks: ChunkRef[];
}

export type CheckpointReason = 'mission' | 'manual' | 'scheduled' | 'before_restore';

export interface CheckpointChanges {
  /** User files (paths under /workspace) added, removed and changed since the previous checkpoint. */
  added: string[];
  removed: string[];
  changed: string[];
  /** The computer's memory or disk moved on; the databases (chat, memory, tables) changed. */
  computer: boolean;
  databases: boolean;
}

export interface CheckpointRecord {
  format: number;
  id: string;
  created_at: number;
  reason: CheckpointReason;
  /** What it was taken before: the user's message, or "Checkpoint now". */
  label: string;
  /** The page's canvas layout (window places), when it gave one. */
  layout: string | null;
  files: Record<string, CheckpointFile>;
  changes: CheckpointChanges;
  /** Bytes this checkpoint added to the store (its pack). */
  added_bytes: number;
  /** The files' whole size: what restoring it writes. */
  total_bytes: number;
}

/** One file to keep: read in chunks, unless `stamp` (or `unchanged`) says the last checkpoint's chunks still hold. */
export interface CheckpointSource {
  path: string;
  size: number;
  stamp?: string;
  /** Chunk `index` is the same as in the previous checkpoint's file of this path (known without reading). */
  unchanged?(index: number): boolean;
  /**
   * The whole file in memory (the computer's saved state): cut where its layout and content say
   * rather than every 64 KiB, so bytes moved along by something inserted before them still match
   * (spans.ts).
   */
  bytes?: Uint8Array;
  /** The cuts of `bytes` and their hashes, when they were begun before the checkpoint (digestState). */
  digest?: Promise<StateDigest>;
  read(at: number, length: number): Promise<Uint8Array>;
}

/** A saved state's cuts (spans.ts), the hash of each, and the time each took. */
export interface StateDigest {
  spans: [number, number][];
  hashes: string[];
  ms: { cut: number; hash: number };
}

/**
 * Cuts and hashes a state in memory: all its chunks at once (one digest after another would wait
 * on each). Begun as soon as the state is captured, it runs while the stack's files are listed.
 */
export async function digestState(bytes: Uint8Array): Promise<StateDigest> {
  const began = performance.now();
  const spans = stateSpans(bytes);
  const cut = performance.now();
  const hashes = await Promise.all(spans.map(([at, length]) => sha256(bytes.subarray(at, at + length))));
  return { spans, hashes, ms: { cut: cut - began, hash: performance.now() - cut } };
}

export interface TakeOptions {
  reason: CheckpointReason;
  label: string;
  layout: string | null;
  sources: CheckpointSource[];
  /** Which paths are user files (listed in the changes by name). */
  isUserFile(path: string): boolean;
  /** Paths of the computer (compared as one thing). */
  isComputer(path: string): boolean;
  isDatabase(path: string): boolean;
}

export interface KeepRule {
  /** The newest `last` are kept, and the newest of each of the last `days` days. */
  last: number;
  days: number;
}

export const KEEP_RULE: KeepRule = { last: 20, days: 7 };

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
  constructor(
    readonly code: 'not_found' | 'damaged',
    message: string,
  ) {
    super(message);
  }
}

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };
const entriesOf = (dir: FileSystemDirectoryHandle) => (dir as unknown as Entries).entries();
const ID = /^c-[0-9a-z]+-[0-9a-f]{6}$/;

export interface CheckpointStore {
  list(): Promise<CheckpointRecord[]>;
  get(id: string): Promise<CheckpointRecord>;
  take(options: TakeOptions): Promise<CheckpointRecord>;
  /** Writes checkpoint `id`'s files into `into` (a folder laid out as a stack), `skip`ping some paths. */
  restoreInto(id: string, into: FileSystemDirectoryHandle, options?: { skip?(path: string): boolean; signal?: AbortSignal; onProgress?(done: number, total: number): void }): Promise<CheckpointRecord>;
  /** Applies the keep rule; returns the ids removed. */
  prune(rule?: KeepRule): Promise<string[]>;
  remove(id: string): Promise<void>;
  /** Bytes the store takes (every pack and record). */
  bytes(): Promise<number>;
}

/**
 * `owner`: whoever holds the stack (its worker, or the stacks worker while it is still) and alone
 * takes, prunes and sweeps; a reader (opening a checkpoint as a new stack while the stack is open
 * in a tab) never removes a pack, which may belong to a checkpoint being taken.
 */
export function checkpointStore(dir: FileSystemDirectoryHandle, options: { now?: () => number; owner?: boolean } = {}): CheckpointStore {
  const owner = options.owner !== false;
  const now = options.now ?? Date.now;
  let records: Map<string, CheckpointRecord> | null = null;
  // One change at a time: a take, a prune and a restore never interleave.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };

  async function packs(): Promise<FileSystemDirectoryHandle> {
    return dir.getDirectoryHandle(PACKS, { create: true });
  }

  let loading: Promise<Map<string, CheckpointRecord>> | null = null;
  /** The records, read once: every caller waits on the same first read. */
  function load(): Promise<Map<string, CheckpointRecord>> {
    loading ??= readRecords();
    return loading;
  }

  async function readRecords(): Promise<Map<string, CheckpointRecord>> {
    const found = new Map<string, CheckpointRecord>();
    for await (const [name, handle] of entriesOf(dir)) {
      if (handle.kind !== 'file' || !name.endsWith('.json')) continue;
      try {
        const record = JSON.parse(await (await (handle as FileSystemFileHandle).getFile()).text()) as CheckpointRecord;
        if (record.format === FORMAT && ID.test(record.id) && `${record.id}.json` === name) found.set(record.id, record);
      } catch {
        // A record that does not parse is not a checkpoint; its pack goes with the sweep below.
      }
    }
    records = found;
    if (owner) await sweepPacks();
    return found;
  }

  function sorted(map: Map<string, CheckpointRecord>): CheckpointRecord[] {
    return [...map.values()].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
  }

  /** Removes every pack no kept checkpoint names (a take cut short, or pruned ones). */
  async function sweepPacks(): Promise<void> {
    const named = new Set<string>();
    for (const record of records!.values()) for (const file of Object.values(record.files)) for (const chunk of file.chunks) named.add(chunk[1]);
    const folder = await packs();
    const gone: string[] = [];
    for await (const [name] of entriesOf(folder)) if (!named.has(name.replace(/\.pack$/, ''))) gone.push(name);
    for (const name of gone) await folder.removeEntry(name).catch(() => {});
  }

  async function readChunk(ref: ChunkRef, cache: Map<string, File>): Promise<Uint8Array> {
    let file = cache.get(ref[1]);
    if (!file) {
      try {
        file = await (await (await packs()).getFileHandle(`${ref[1]}.pack`)).getFile();
      } catch {
        throw new CheckpointError('damaged', `A part of this checkpoint is missing (${ref[1]}); it cannot be restored.`);
      }
      cache.set(ref[1], file);
    }
    const stored = new Uint8Array(await file.slice(ref[2], ref[2] + ref[3]).arrayBuffer());
    if (stored.byteLength !== ref[3]) throw new CheckpointError('damaged', `A part of this checkpoint is cut short (${ref[1]}); it cannot be restored.`);
    try {
      return await unpack(stored, ref[4]);
    } catch (error) {
      if (ref[4] === STORED || error instanceof CodecUnavailableError) throw error;
      throw new CheckpointError('damaged', `A part of this checkpoint is damaged (${ref[1]}); it cannot be restored.`);
    }
  }

  return {
    async list() {
      return sorted(await load());
    },

    async get(id) {
      const record = (await load()).get(id);
      if (!record) throw new CheckpointError('not_found', 'That checkpoint is not kept any more.');
      return record;
    },

    take(options) {
      return serial(async () => {
        if (!owner) throw new Error('a reader of the checkpoints cannot take one');
        const kept = await load();
        const previous = sorted(kept)[0];
        const known = new Map<string, ChunkRef>();
        for (const record of kept.values()) for (const file of Object.values(record.files)) for (const chunk of file.chunks) known.set(chunk[0], chunk);

        const id = `c-${now().toString(36)}-${[...crypto.getRandomValues(new Uint8Array(3))].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
        const handle = await (await packs()).getFileHandle(`${id}.pack`, { create: true });
        const writable = await handle.createWritable();
        const pack = batched(writable);
        let packed = 0;
        const files: Record<string, CheckpointFile> = {};
        const spent = { cut: 0, read: 0, hash: 0, pack: 0, write: 0, readBytes: 0, newBytes: 0 };
        const newByPath = new Map<string, number>();
        let mark = performance.now();
        const lap = (what: 'cut' | 'read' | 'hash' | 'pack' | 'write') => {
          const now = performance.now();
          spent[what] += now - mark;
          mark = now;
        };
        const packing = await packer();
        try {
          for (const source of options.sources) {
            const before = previous?.files[source.path];
            if (before && source.stamp !== undefined && before.stamp === source.stamp && before.size === source.size) {
              files[source.path] = before;
              continue;
            }
            const chunks: ChunkRef[] = [];
            mark = performance.now();
            const digest = source.bytes ? await (source.digest ?? digestState(source.bytes)) : null;
            if (digest) {
              // Its own time, spent (in part) before this checkpoint was stored.
              spent.cut += digest.ms.cut;
              spent.hash += digest.ms.hash;
              mark = performance.now();
            }
            const spans = digest ? digest.spans : fixedSpans(source.size);
            const hashes = digest ? digest.hashes : null;
            for (let index = 0; index < spans.length; index++) {
              const [at, length] = spans[index]!;
              const old = before?.chunks[index];
              // A fixed chunk the source says is unchanged is reused only where it was whole before (or the size is the same).
              const count = spans.length;
              const wasWhole = old !== undefined && (before!.size === source.size || (index + 1) * CHUNK_SIZE <= before!.size);
              if (!source.bytes && old && wasWhole && index < count - 1 + (before!.size === source.size ? 1 : 0) && source.unchanged?.(index)) {
                chunks.push(old);
                continue;
              }
              mark = performance.now();
              const bytes = source.bytes ? source.bytes.subarray(at, at + length) : await source.read(at, length);
              lap('read');
              spent.readBytes += length;
              if (bytes.byteLength !== length) throw new Error(`${source.path} changed while it was read`);
              const hash = hashes ? hashes[index]! : await sha256(bytes);
              lap('hash');
              const have = known.get(hash);
              if (have) {
                chunks.push(have);
                continue;
              }
              const compressed = packing.pack(bytes);
              lap('pack');
              spent.newBytes += length;
              newByPath.set(source.path, (newByPath.get(source.path) ?? 0) + length);
              // What barely shrinks (compressed or random bytes) is kept as it is.
              const keep = compressed.byteLength < bytes.byteLength * 0.9;
              const stored = keep ? compressed : bytes;
              const ref: ChunkRef = [hash, id, packed, stored.byteLength, keep ? packing.packing : STORED];
              await pack.write(stored);
              lap('write');
              packed += stored.byteLength;
              known.set(hash, ref);
              chunks.push(ref);
            }
            files[source.path] = { size: source.size, ...(source.stamp !== undefined ? { stamp: source.stamp } : {}), chunks };
          }
          await pack.flush();
          await writable.close();
        } catch (error) {
          await writable.abort().catch(() => {});
          await (await packs()).removeEntry(`${id}.pack`).catch(() => {});
          throw error;
        }
        if (packed === 0) await (await packs()).removeEntry(`${id}.pack`).catch(() => {});
        const ms = (value: number) => Math.round(value);
        console.info(
          `checkpoint ${id}: ${(spent.readBytes / 1e6).toFixed(1)} MB cut (${ms(spent.cut)} ms), read (${ms(spent.read)} ms) and hashed (${ms(spent.hash)} ms), ${(spent.newBytes / 1e6).toFixed(1)} MB new, packed (${packing.packing === ZSTD ? 'zstd' : 'deflate'}, ${ms(spent.pack)} ms) to ${(packed / 1e6).toFixed(1)} MB, written (${ms(spent.write)} ms); new: ${[...newByPath].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([path, bytes]) => `${path} ${(bytes / 1e6).toFixed(1)} MB`).join(', ')}`,
        );

        const record: CheckpointRecord = {
          format: FORMAT,
          id,
          created_at: now(),
          reason: options.reason,
          label: options.label.slice(0, 200),
          layout: options.layout,
          files,
          changes: changesBetween(previous?.files ?? {}, files, options),
          added_bytes: packed,
          total_bytes: Object.values(files).reduce((sum, file) => sum + file.size, 0),
        };
        await writeJson(dir, `${id}.json`, record);
        kept.set(id, record);
        return record;
      });
    },

    restoreInto(id, into, restoreOptions = {}) {
      return serial(async () => {
        const record = (await load()).get(id);
        if (!record) throw new CheckpointError('not_found', 'That checkpoint is not kept any more.');
        const cache = new Map<string, File>();
        const paths = Object.keys(record.files).filter((path) => !restoreOptions.skip?.(path));
        const total = paths.reduce((sum, path) => sum + record.files[path]!.size, 0);
        let done = 0;
        for (const path of paths) {
          if (restoreOptions.signal?.aborted) throw restoreOptions.signal.reason;
          const file = record.files[path]!;
          const parts = path.split('/');
          let folder = into;
          for (const part of parts.slice(0, -1)) folder = await folder.getDirectoryHandle(part, { create: true });
          const writable = await (await folder.getFileHandle(parts.at(-1)!, { create: true })).createWritable({ keepExistingData: false });
          try {
            for (const chunk of file.chunks) {
              const bytes = await readChunk(chunk, cache);
              await writable.write(bytes as Uint8Array<ArrayBuffer>);
              done += bytes.byteLength;
              restoreOptions.onProgress?.(done, total);
            }
            await writable.close();
          } catch (error) {
            await writable.abort().catch(() => {});
            throw error;
          }
        }
        return record;
      });
    },

    prune(rule = KEEP_RULE) {
      return serial(async () => {
        const kept = await load();
        const list = sorted(kept);
        const keep = new Set(list.slice(0, rule.last).map((record) => record.id));
        const days = new Set<string>();
        const since = now() - rule.days * 86_400_000;
        for (const record of list) {
          if (record.created_at < since) break;
          const day = new Date(record.created_at).toDateString();
          if (!days.has(day)) {
            days.add(day);
            keep.add(record.id);
          }
        }
        const gone = list.filter((record) => !keep.has(record.id)).map((record) => record.id);
        for (const id of gone) {
          await dir.removeEntry(`${id}.json`).catch(() => {});
          kept.delete(id);
        }
        if (gone.length) await sweepPacks();
        return gone;
      });
    },

    remove(id) {
      return serial(async () => {
        const kept = await load();
        if (!kept.has(id)) throw new CheckpointError('not_found', 'That checkpoint is not kept any more.');
        await dir.removeEntry(`${id}.json`);
        kept.delete(id);
        await sweepPacks();
      });
    },

    async bytes() {
      await load();
      // Every file's size asked for at once: the timeline asks after each checkpoint.
      const sizes: Promise<number>[] = [];
      for (const folder of [dir, await packs()]) {
        for await (const [, handle] of entriesOf(folder)) if (handle.kind === 'file') sizes.push((handle as FileSystemFileHandle).getFile().then((file) => file.size));
      }
      return (await Promise.all(sizes)).reduce((sum, size) => sum + size, 0);
    },
  };
}

/** Writes in runs of about 4 MB: each write to an OPFS writable is a round trip. */
function batched(writable: FileSystemWritableFileStream) {
  let parts: Uint8Array[] = [];
  let size = 0;
  const flush = async () => {
    if (size === 0) return;
    const joined = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      joined.set(part, at);
      at += part.byteLength;
    }
    parts = [];
    size = 0;
    await writable.write(joined);
  };
  return {
    async write(bytes: Uint8Array) {
      parts.push(bytes);
      size += bytes.byteLength;
      if (size >= 4 << 20) await flush();
    },
    flush,
  };
}

function changesBetween(before: Record<string, CheckpointFile>, after: Record<string, CheckpointFile>, options: TakeOptions): CheckpointChanges {
  const changes: CheckpointChanges = { added: [], removed: [], changed: [], computer: false, databases: false };
  const same = (a: CheckpointFile | undefined, b: CheckpointFile | undefined) =>
    a !== undefined && b !== undefined && a.size === b.size && a.chunks.length === b.chunks.length && a.chunks.every((chunk, i) => chunk[0] === b.chunks[i]![0]);
  for (const path of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[path], after[path])) continue;
    if (options.isComputer(path)) changes.computer = true;
    else if (options.isDatabase(path)) changes.databases = true;
    else if (options.isUserFile(path)) {
      if (!before[path]) changes.added.push(path);
      else if (!after[path]) changes.removed.push(path);
      else changes.changed.push(path);
    }
  }
  return changes;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (let i = 0; i < 16; i++) hex += digest[i]!.toString(16).padStart(2, '0');
  return hex;
}

async function writeJson(dir: FileSystemDirectoryHandle, name: string, value: unknown): Promise<void> {
  const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
  try {
    await writable.write(JSON.stringify(value));
    await writable.close();
  } catch (error) {
    await writable.abort().catch(() => {});
    throw error;
  }
}
