// The checkpoints a store keeps, as it reads them: their records (read once, every caller waiting
// on the first read), the packs folder, the sweep of packs no record names, and a chunk read back.
import { entriesOf } from '../../storage/opfs.ts';
import { CodecUnavailableError, STORED, unpack } from './codec.ts';
import { CHECKPOINT_ID, CheckpointError, FORMAT, PACKS, type CheckpointRecord, type ChunkRef } from './record.ts';

export interface KeptCheckpoints {
  /** The checkpoints' folder (`.os/checkpoints/`). */
  dir: FileSystemDirectoryHandle;
  /** The records by id, read once. */
  load(): Promise<Map<string, CheckpointRecord>>;
  packs(): Promise<FileSystemDirectoryHandle>;
  /** Removes every pack no kept checkpoint names (a take cut short, or pruned ones). */
  sweepPacks(): Promise<void>;
  /** One chunk's bytes, unpacked; `cache` holds the packs read so far. */
  readChunk(ref: ChunkRef, cache: Map<string, File>): Promise<Uint8Array>;
}

/** Newest first. */
export function sorted(map: Map<string, CheckpointRecord>): CheckpointRecord[] {
  return [...map.values()].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1));
}

/** `owner`: sweeps the packs no record names once the records are read (a reader never does). */
export function keptCheckpoints(dir: FileSystemDirectoryHandle, owner: boolean): KeptCheckpoints {
  let records: Map<string, CheckpointRecord> | null = null;
  let loading: Promise<Map<string, CheckpointRecord>> | null = null;

  const packs = () => dir.getDirectoryHandle(PACKS, { create: true });

  async function readRecords(): Promise<Map<string, CheckpointRecord>> {
    const found = new Map<string, CheckpointRecord>();
    for await (const [name, handle] of entriesOf(dir)) {
      if (handle.kind !== 'file' || !name.endsWith('.json')) continue;
      try {
        const record = JSON.parse(await (await (handle as FileSystemFileHandle).getFile()).text()) as CheckpointRecord;
        if (record.format === FORMAT && CHECKPOINT_ID.test(record.id) && `${record.id}.json` === name) found.set(record.id, record);
      } catch {
        // A record that does not parse is not a checkpoint; its pack goes with the sweep below.
      }
    }
    records = found;
    if (owner) await sweepPacks();
    return found;
  }

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
    dir,
    load() {
      loading ??= readRecords();
      return loading;
    },
    packs,
    sweepPacks,
    readChunk,
  };
}
