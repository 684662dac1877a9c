// A stack's checkpoints (the format: record.ts): listed, taken (take.ts), restored into a folder,
// pruned by the keep rule and removed, one change at a time.
import { replaceFileWith } from '../../storage/atomic-write.ts';
import { directoryAt, entriesOf } from '../../storage/opfs.ts';
import { keptCheckpoints, sorted } from './kept.ts';
import { CheckpointError, KEEP_RULE, type CheckpointRecord, type KeepRule, type TakeOptions } from './record.ts';
import { takeCheckpoint } from './take.ts';

export { CHECKPOINTS_DIR, CHUNK_SIZE, CheckpointError, digestState, KEEP_RULE } from './record.ts';
export type { CheckpointChanges, CheckpointFile, CheckpointReason, CheckpointRecord, CheckpointSource, ChunkRef, KeepRule, StateDigest, TakeOptions } from './record.ts';

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
  const held = keptCheckpoints(dir, owner);
  const { load } = held;
  // One change at a time: a take, a prune and a restore never interleave.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };

  return {
    async list() {
      return sorted(await load());
    },

    async get(id) {
      const record = (await load()).get(id);
      if (!record) throw new CheckpointError('not_found', 'That checkpoint is not kept any more.');
      return record;
    },

    take(takeOptions) {
      return serial(async () => {
        if (!owner) throw new Error('a reader of the checkpoints cannot take one');
        return takeCheckpoint(held, takeOptions, now);
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
          const folder = (await directoryAt(into, parts.slice(0, -1).join('/'), { create: true }))!;
          await replaceFileWith(folder, parts.at(-1)!, async (writable) => {
            for (const chunk of file.chunks) {
              const bytes = await held.readChunk(chunk, cache);
              await writable.write(bytes as Uint8Array<ArrayBuffer>);
              done += bytes.byteLength;
              restoreOptions.onProgress?.(done, total);
            }
          });
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
        if (gone.length) await held.sweepPacks();
        return gone;
      });
    },

    remove(id) {
      return serial(async () => {
        const kept = await load();
        if (!kept.has(id)) throw new CheckpointError('not_found', 'That checkpoint is not kept any more.');
        await dir.removeEntry(`${id}.json`);
        kept.delete(id);
        await held.sweepPacks();
      });
    },

    async bytes() {
      await load();
      // Every file's size asked for at once: the timeline asks after each checkpoint.
      const sizes: Promise<number>[] = [];
      for (const folder of [dir, await held.packs()]) {
        for await (const [, handle] of entriesOf(folder)) if (handle.kind === 'file') sizes.push((handle as FileSystemFileHandle).getFile().then((file) => file.size));
      }
      return (await Promise.all(sizes)).reduce((sum, size) => sum + size, 0);
    },
  };
}
