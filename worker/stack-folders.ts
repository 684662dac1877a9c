// Every stack of this browser as a folder under OPFS `stacks/<id>/`: their names and sizes, and
// creating, renaming, duplicating and deleting them. Runs in the stacks worker, never on the page.
// A stack open in a tab is guarded by that tab's Web Lock: one is copied or deleted only while it
// is still (nobody holds its lock and this takes it, or the caller holds it and closed its worker).
// Stack files, kiosk reset points and checkpoints restored are their own modules over the same
// context (stack-folders-file.ts, -kiosk.ts, -restore.ts).
import type { StackSummary } from '../protocol/stacks-api.ts';
import { STACK_PATHS } from '../storage/layout.ts';
import { copyFolder, folderSize } from '../storage/walk.ts';
import { checkName, fallbackName, foldersContext, fullOr, refuseNoRoom, removeWhenReleased, StackFolderError, type FoldersContext, type StackFolders as Folders, type StackFoldersDeps, type StackLocks } from './stack-folders-context.ts';
import { stackFileOperations } from './stack-folders-file.ts';
import { resetPointOperations } from './stack-folders-kiosk.ts';
import { checkpointOperations, finishRestore } from './stack-folders-restore.ts';
import { META_PATH, readMeta, writeMeta } from './stack-meta.ts';
import { noRoomMessage } from './storage-full.ts';

export { StackFolderError } from './stack-folders-context.ts';
export type { StackExportOptions, StackFolders, StackFoldersDeps, StackImportOptions, StackLocks } from './stack-folders-context.ts';

export function createStackFolders(deps: StackFoldersDeps): Folders {
  const ctx = foldersContext(deps);
  return { ...stackOperations(ctx), ...stackFileOperations(ctx), ...resetPointOperations(ctx), ...checkpointOperations(ctx) };
}

/** Listing, making, renaming, duplicating and deleting stacks. */
function stackOperations(ctx: FoldersContext): Pick<Folders, 'list' | 'create' | 'rename' | 'checkDuplicate' | 'duplicate' | 'remove'> {
  const { deps, now } = ctx;
  return {
    async list(names = []) {
      const stacks: (StackSummary & { created: number })[] = [];
      for (const { id, dir, meta } of await ctx.stackIds()) {
        if (meta?.copying) {
          // A copy cut short (the tab closed mid-way) is not a stack: it goes, freeing its room,
          // unless the copy is still being made.
          await deps.locks.withLock(id, async () => (await deps.stacksDir()).removeEntry(id, { recursive: true })).catch(() => {});
          // And the system image an import cut short was bringing with it.
          if (deps.root) await import('./stack-file/image-entries.ts').then(async ({ pruneImages }) => pruneImages(await deps.root!(), await deps.stacksDir(), folderSize)).catch(() => {});
          continue;
        }
        let name = meta?.name;
        const known = names.find((entry) => entry.id === id)?.name.trim();
        if (!name && known) {
          // The app's earlier list of names is recorded in the stack itself, once.
          name = known.slice(0, 60);
          await writeMeta(dir, { name, created_at: 0 }).catch(() => {});
        }
        stacks.push({ id, name: name ?? fallbackName(id), bytes: await folderSize(dir), created: meta?.created_at ?? 0 });
      }
      // The first stack first, then by age: the order the user made them in.
      stacks.sort((a, b) => (a.id === 'default' ? -1 : b.id === 'default' ? 1 : a.created - b.created || (a.id < b.id ? -1 : 1)));
      const estimate = await deps.estimate();
      return {
        stacks: stacks.map(({ id, name, bytes }) => ({ id, name, bytes })),
        usage: typeof estimate?.usage === 'number' ? estimate.usage : null,
        quota: typeof estimate?.quota === 'number' ? estimate.quota : null,
      };
    },

    async create(name) {
      const clean = checkName(name);
      const id = ctx.newId();
      const dir = await (await deps.stacksDir()).getDirectoryHandle(id, { create: true });
      try {
        await writeMeta(dir, { name: clean, created_at: now() });
      } catch (error) {
        await (await deps.stacksDir()).removeEntry(id, { recursive: true }).catch(() => {});
        throw fullOr(error, `"${clean}" was not created`);
      }
      return { id, name: clean, bytes: await folderSize(dir) };
    },

    async rename(stackId, name) {
      const clean = checkName(name);
      const dir = await ctx.folder(stackId);
      const meta = await readMeta(dir);
      try {
        await writeMeta(dir, { ...meta, name: clean, created_at: meta?.created_at ?? 0 });
      } catch (error) {
        throw fullOr(error, 'The new name was not saved');
      }
      return ctx.summary(stackId, dir);
    },

    async checkDuplicate(stackId, heldByCaller) {
      const dir = await ctx.folder(stackId);
      const { name, bytes } = await ctx.summary(stackId, dir);
      refuseNoRoom(noRoomMessage(`"${name}" was not duplicated`, bytes, await deps.estimate()));
      // Open in another tab: said now, before the open stack here is closed for nothing.
      if (!heldByCaller) await ctx.whileStill(stackId, name, false, 'duplicate', async () => {});
    },

    async duplicate(stackId, name, heldByCaller) {
      const clean = checkName(name);
      const source = await ctx.folder(stackId);
      const from = await ctx.summary(stackId, source);
      return ctx.whileStill(stackId, from.name, heldByCaller, 'duplicate', async (signal) => {
        await finishRestore(source, { now, releaseWaitMs: ctx.releaseWaitMs });
        // Measured again under the lock: what is copied is what is there now.
        const bytes = await folderSize(source);
        refuseNoRoom(noRoomMessage(`"${from.name}" was not duplicated`, bytes, await deps.estimate()));
        const id = ctx.newId();
        const stacks = await deps.stacksDir();
        const copied = await deps.locks.withLock(id, async () => {
          const target = await stacks.getDirectoryHandle(id, { create: true });
          try {
            // Marked first: a copy cut short is never taken for a stack (list() removes it).
            await writeMeta(target, { name: clean, created_at: now(), copying: true });
            await copyFolder(source, target, signal, [META_PATH, STACK_PATHS.checkpoints]);
            await writeMeta(target, { name: clean, created_at: now() });
          } catch (error) {
            await stacks.removeEntry(id, { recursive: true }).catch(() => {});
            if (signal.aborted) throw new StackFolderError({ code: 'busy', message: `"${from.name}" was opened in another tab during the copy, so nothing was copied. Try again once it is closed.` });
            throw fullOr(error, `"${from.name}" was not duplicated`);
          }
          return ctx.summary(id, target);
        });
        if (!copied.held) throw new StackFolderError({ code: 'internal', message: 'The new stack id is in use; try again.' });
        return copied.value;
      });
    },

    async remove(stackId, heldByCaller) {
      const dir = await ctx.folder(stackId);
      const { name, bytes } = await ctx.summary(stackId, dir);
      const others = (await ctx.stackIds()).filter((stack) => stack.id !== stackId && !stack.meta?.copying);
      if (others.length === 0) throw new StackFolderError({ code: 'bad_request', message: `"${name}" is the only stack here: make another one before deleting it.` });
      return ctx.whileStill(stackId, name, heldByCaller, 'delete', async () => {
        await removeWhenReleased(await deps.stacksDir(), stackId, ctx.releaseWaitMs);
        // A system image only this stack ran on goes with it.
        const { pruneImages } = await import('./stack-file/image-entries.ts');
        const images = deps.root ? await pruneImages(await deps.root(), await deps.stacksDir(), folderSize).catch(() => 0) : 0;
        return { freed: bytes + images };
      });
    },
  };
}

/** Locks over the Web Locks API (available in workers): the same locks the tabs hold. */
export function webStackLocks(locks: LockManager, lockName: (stackId: string) => string): StackLocks {
  return {
    async withLock(stackId, work) {
      const controller = new AbortController();
      let running: Promise<unknown> | null = null;
      try {
        return await locks.request(lockName(stackId), { ifAvailable: true }, async (lock) => {
          if (!lock) return { held: false as const };
          const value = work(controller.signal);
          running = value;
          return { held: true as const, value: await value };
        });
      } catch (error) {
        if (!running) throw error;
        // Another tab took the lock over ("Use it here"): the work stops, undoes itself, and says why.
        controller.abort(error);
        const failure = await (running as Promise<unknown>).then(() => error, (reason: unknown) => reason);
        throw failure;
      }
    },
  };
}
