// Taking a checkpoint: each source cut into chunks (64 KiB, or where a saved state's layout says),
// each chunk named by its hash and stored only when no kept checkpoint holds it yet, packed into
// this checkpoint's one pack; the record written last.
import { replaceFile, replaceFileWith } from '../../storage/atomic-write.ts';
import { packer, STORED, ZSTD } from './codec.ts';
import { sorted, type KeptCheckpoints } from './kept.ts';
import { CHUNK_SIZE, chunkHash, digestState, FORMAT, type CheckpointChanges, type CheckpointFile, type CheckpointRecord, type CheckpointSource, type ChunkRef, type TakeOptions } from './record.ts';
import { fixedSpans } from './spans.ts';

type Packer = Awaited<ReturnType<typeof packer>>;
type Lap = 'cut' | 'read' | 'hash' | 'pack' | 'write';

/** Where the time of a take went, and how many bytes were read and were new (logged once it is stored). */
interface Spent {
  cut: number;
  read: number;
  hash: number;
  pack: number;
  write: number;
  readBytes: number;
  newBytes: number;
  newByPath: Map<string, number>;
  mark: number;
}

/** What the sources of one checkpoint share while they are stored. */
interface Packing {
  id: string;
  known: Map<string, ChunkRef>;
  pack: ReturnType<typeof batched>;
  packing: Packer;
  packed: number;
  spent: Spent;
}

export async function takeCheckpoint(kept: KeptCheckpoints, options: TakeOptions, now: () => number): Promise<CheckpointRecord> {
  const records = await kept.load();
  const previous = sorted(records)[0];
  const known = new Map<string, ChunkRef>();
  for (const record of records.values()) for (const file of Object.values(record.files)) for (const chunk of file.chunks) known.set(chunk[0], chunk);

  const id = `c-${now().toString(36)}-${[...crypto.getRandomValues(new Uint8Array(3))].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
  const spent: Spent = { cut: 0, read: 0, hash: 0, pack: 0, write: 0, readBytes: 0, newBytes: 0, newByPath: new Map(), mark: performance.now() };
  const packing = await packer();
  const files: Record<string, CheckpointFile> = {};
  let packed = 0;
  try {
    await replaceFileWith(await kept.packs(), `${id}.pack`, async (writable) => {
      const state: Packing = { id, known, pack: batched(writable), packing, packed: 0, spent };
      for (const source of options.sources) {
        const before = previous?.files[source.path];
        if (before && source.stamp !== undefined && before.stamp === source.stamp && before.size === source.size) {
          files[source.path] = before;
          continue;
        }
        files[source.path] = { size: source.size, ...(source.stamp !== undefined ? { stamp: source.stamp } : {}), chunks: await storeSource(source, before, state) };
      }
      await state.pack.flush();
      packed = state.packed;
    });
  } catch (error) {
    await (await kept.packs()).removeEntry(`${id}.pack`).catch(() => {});
    throw error;
  }
  if (packed === 0) await (await kept.packs()).removeEntry(`${id}.pack`).catch(() => {});
  logTake(id, packing, packed, spent);

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
  await replaceFile(kept.dir, `${id}.json`, JSON.stringify(record));
  records.set(id, record);
  return record;
}

/** One source's chunks: reused from the previous checkpoint where it says so, else hashed, and packed when new. */
async function storeSource(source: CheckpointSource, before: CheckpointFile | undefined, state: Packing): Promise<ChunkRef[]> {
  const { spent, known, packing } = state;
  const lap = (what: Lap) => {
    const at = performance.now();
    spent[what] += at - spent.mark;
    spent.mark = at;
  };
  const chunks: ChunkRef[] = [];
  spent.mark = performance.now();
  const digest = source.bytes ? await (source.digest ?? digestState(source.bytes)) : null;
  if (digest) {
    // Its own time, spent (in part) before this checkpoint was stored.
    spent.cut += digest.ms.cut;
    spent.hash += digest.ms.hash;
    spent.mark = performance.now();
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
    spent.mark = performance.now();
    const bytes = source.bytes ? source.bytes.subarray(at, at + length) : await source.read(at, length);
    lap('read');
    spent.readBytes += length;
    if (bytes.byteLength !== length) throw new Error(`${source.path} changed while it was read`);
    const hash = hashes ? hashes[index]! : await chunkHash(bytes);
    lap('hash');
    const have = known.get(hash);
    if (have) {
      chunks.push(have);
      continue;
    }
    const compressed = packing.pack(bytes);
    lap('pack');
    spent.newBytes += length;
    spent.newByPath.set(source.path, (spent.newByPath.get(source.path) ?? 0) + length);
    // What barely shrinks (compressed or random bytes) is kept as it is.
    const keep = compressed.byteLength < bytes.byteLength * 0.9;
    const stored = keep ? compressed : bytes;
    const ref: ChunkRef = [hash, state.id, state.packed, stored.byteLength, keep ? packing.packing : STORED];
    await state.pack.write(stored);
    lap('write');
    state.packed += stored.byteLength;
    known.set(hash, ref);
    chunks.push(ref);
  }
  return chunks;
}

function logTake(id: string, packing: Packer, packed: number, spent: Spent): void {
  const ms = (value: number) => Math.round(value);
  console.info(
    `checkpoint ${id}: ${(spent.readBytes / 1e6).toFixed(1)} MB cut (${ms(spent.cut)} ms), read (${ms(spent.read)} ms) and hashed (${ms(spent.hash)} ms), ${(spent.newBytes / 1e6).toFixed(1)} MB new, packed (${packing.packing === ZSTD ? 'zstd' : 'deflate'}, ${ms(spent.pack)} ms) to ${(packed / 1e6).toFixed(1)} MB, written (${ms(spent.write)} ms); new: ${[...spent.newByPath].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([path, bytes]) => `${path} ${(bytes / 1e6).toFixed(1)} MB`).join(', ')}`,
  );
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
