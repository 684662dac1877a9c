// A stack's checkpoints made into stacks again, in the stacks worker: a still stack restored to one
// of its checkpoints (what it was kept first, so a restore can be undone), a new stack made of a
// checkpoint, and a restore a killed tab left part-way finished before anything opens the stack.
import { STACK_PATHS } from '../storage/layout.ts';
import { childrenOf } from '../storage/opfs.ts';
import { checkpointKinds, openCheckpointStore } from './checkpoints/checkpoints.ts';
import { checkpointSources, keptThroughRestore } from './checkpoints/sources.ts';
import { CheckpointError, type CheckpointStore } from './checkpoints/store.ts';
import { checkName, fullOr, refuseNoRoom, removeWhenReleased, StackFolderError, type FoldersContext, type StackFolders } from './stack-folders-context.ts';
import { readMeta, writeMeta } from './stack-meta.ts';
import { noRoomMessage } from './storage-full.ts';

export function checkpointOperations(ctx: FoldersContext): Pick<StackFolders, 'restoreCheckpoint' | 'stackFromCheckpoint'> {
  const { deps, now, releaseWaitMs } = ctx;
  return {
    async restoreCheckpoint(stackId, checkpointId, options) {
      const dir = await ctx.folder(stackId);
      const { name } = await ctx.summary(stackId, dir);
      return ctx.whileStill(stackId, name, options.heldByCaller, 'restore', async (signal) => {
        // What is kept first below must be a whole stack, not one a killed tab left part-way.
        await finishRestore(dir, { now, releaseWaitMs });
        const store = await openCheckpointStore(dir, { now });
        const target = await store.get(checkpointId).catch(checkpointRefusal);
        refuseNoRoom(noRoomMessage(`"${name}" was not restored`, target.total_bytes, await deps.estimate()));
        // The stack as it is now, kept first: what the restore replaces can be brought back.
        const newest = (await store.list())[0];
        const sources = await checkpointSources(dir, { databases: null, capture: null, ...(newest ? { previous: newest.files } : {}) });
        const before = await store
          .take({ reason: 'before_restore', label: `Before going back to ${new Date(target.created_at).toLocaleString()}`, layout: options.layout, sources, ...checkpointKinds })
          .catch((error: unknown) => Promise.reject(fullOr(error, `"${name}" was not restored (the stack as it is now could not be kept first)`)));
        const replaceWith = (id: string) => replaceWithCheckpoint(dir, store, id, { signal, waitMs: releaseWaitMs, name });
        try {
          await replaceWith(checkpointId);
        } catch (error) {
          // Half a restore is no stack: put back what it was (marked in turn, so a kill meanwhile
          // still ends with the stack as it was).
          await replaceWith(before.id).catch(() => {});
          if (error instanceof CheckpointError) checkpointRefusal(error);
          throw fullOr(error, `"${name}" was not restored; it is as it was`);
        }
        return { layout: target.layout };
      });
    },

    async stackFromCheckpoint(stackId, checkpointId, name) {
      const clean = checkName(name);
      const source = await ctx.folder(stackId);
      // A reader: the stack may be open, its worker taking checkpoints beside this.
      const store = await openCheckpointStore(source, { now, owner: false });
      const record = await store.get(checkpointId).catch(checkpointRefusal);
      refuseNoRoom(noRoomMessage(`"${clean}" was not made`, record.total_bytes, await deps.estimate()));
      const id = ctx.newId();
      const stacks = await deps.stacksDir();
      const made = await deps.locks.withLock(id, async (signal) => {
        const target = await stacks.getDirectoryHandle(id, { create: true });
        try {
          await writeMeta(target, { name: clean, created_at: now(), copying: true });
          await store.restoreInto(checkpointId, target, { signal, skip: keptThroughRestore });
          await writeMeta(target, { name: clean, created_at: now() });
        } catch (error) {
          await removeWhenReleased(stacks, id, releaseWaitMs).catch(() => {});
          if (error instanceof CheckpointError) checkpointRefusal(error);
          throw fullOr(error, `"${clean}" was not made`);
        }
        return { stack: await ctx.summary(id, target), layout: record.layout };
      });
      if (!made.held) throw new StackFolderError({ code: 'internal', message: 'The new stack id is in use; try again.' });
      return made.value;
    },
  };
}

function checkpointRefusal(error: unknown): never {
  if (error instanceof CheckpointError) throw new StackFolderError({ code: error.code === 'not_found' ? 'not_found' : 'storage', message: error.message });
  throw error;
}

/**
 * Makes a still stack exactly checkpoint `id`: its files go, then the checkpoint's are written.
 * The stack's record names the checkpoint from before the first file goes until the last is
 * written, so a restore cut short (a killed tab, a power cut) is finished by `finishRestore` at
 * the next open rather than leaving half a stack. `name`: the record's name when it has none.
 */
async function replaceWithCheckpoint(dir: FileSystemDirectoryHandle, store: CheckpointStore, id: string, options: { signal?: AbortSignal; waitMs: number; name: string }): Promise<void> {
  const meta = (await readMeta(dir)) ?? { name: options.name, created_at: 0 };
  await writeMeta(dir, { ...meta, restoring: id });
  await clearForRestore(dir, '', options.waitMs);
  await store.restoreInto(id, dir, options.signal ? { signal: options.signal } : {});
  const { restoring: _, ...done } = (await readMeta(dir)) ?? meta;
  await writeMeta(dir, done);
}

/**
 * Finishes a restore a killed tab left part-way (the stack's record still names its checkpoint):
 * the stack is made that checkpoint again, whole (doing it twice does no harm). Only for a still
 * stack whose lock the caller holds, before anything opens its files: the stack worker calls it
 * as it starts, the stacks worker before it copies or restores a stack. Returns the checkpoint's
 * id, or null when no restore was under way. A checkpoint that is gone or damaged cannot be
 * finished: the mark is dropped and the stack opens as it lies (said on the console).
 */
export async function finishRestore(dir: FileSystemDirectoryHandle, options: { now?: () => number; releaseWaitMs?: number } = {}): Promise<string | null> {
  const meta = await readMeta(dir);
  if (!meta?.restoring) return null;
  const id = meta.restoring;
  const store = await openCheckpointStore(dir, options.now ? { now: options.now } : {});
  try {
    await replaceWithCheckpoint(dir, store, id, { waitMs: options.releaseWaitMs ?? 10_000, name: meta.name });
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    console.error(`A restore of checkpoint ${id} was cut short and cannot be finished: ${error.message}`);
    const { restoring: _, ...rest } = meta;
    await writeMeta(dir, rest);
  }
  return id;
}

/** Removes every file and folder of a stack a restore replaces (all but its record, secrets and checkpoints). */
async function clearForRestore(dir: FileSystemDirectoryHandle, prefix: string, waitMs: number): Promise<void> {
  for (const [name, handle] of await childrenOf(dir)) {
    const path = prefix ? `${prefix}/${name}` : name;
    if (keptThroughRestore(path)) continue;
    if (handle.kind === 'directory' && (path === STACK_PATHS.system || path === STACK_PATHS.config)) await clearForRestore(handle as FileSystemDirectoryHandle, path, waitMs);
    else await removeWhenReleased(dir, name, waitMs);
  }
}
