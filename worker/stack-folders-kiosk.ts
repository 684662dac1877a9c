// Kiosk reset points, in the stacks worker: a still stack copied whole under OPFS `kiosk/<id>/`
// (never listed as a stack), marked complete last, and copied back over the stack on reset.
import { replaceFile } from '../storage/atomic-write.ts';
import { STACK_PATHS } from '../storage/layout.ts';
import { childrenOf, isNotFound } from '../storage/opfs.ts';
import { copyFolder, folderSize } from '../storage/walk.ts';
import { fullOr, refuseNoRoom, removeWhenReleased, StackFolderError, type FoldersContext, type StackFolders } from './stack-folders-context.ts';
import { finishRestore } from './stack-folders-restore.ts';
import { noRoomMessage } from './storage-full.ts';

/** The mark a complete kiosk reset point carries (written last). */
const POINT_DONE = '.reset-point-complete';

export function resetPointOperations(ctx: FoldersContext): Pick<StackFolders, 'saveResetPoint' | 'resetToPoint' | 'dropResetPoint'> {
  const { deps, now, releaseWaitMs } = ctx;

  async function resetPoints(): Promise<FileSystemDirectoryHandle> {
    if (!deps.resetPointsDir) throw new StackFolderError({ code: 'internal', message: 'Kiosk reset points are not available here.' });
    return deps.resetPointsDir();
  }

  return {
    async saveResetPoint(stackId, heldByCaller) {
      const dir = await ctx.folder(stackId);
      const { name, bytes } = await ctx.summary(stackId, dir);
      refuseNoRoom(noRoomMessage(`The kiosk's starting point for "${name}" was not saved`, bytes, await deps.estimate()));
      return ctx.whileStill(stackId, name, heldByCaller, 'make a kiosk of', async (signal) => {
        await finishRestore(dir, { now, releaseWaitMs });
        const points = await resetPoints();
        await points.removeEntry(stackId, { recursive: true }).catch(() => {});
        const point = await points.getDirectoryHandle(stackId, { create: true });
        try {
          await copyFolder(dir, point, signal, [STACK_PATHS.checkpoints]);
          // Written last: a point cut short has no mark and is never reset to.
          await replaceFile(point, POINT_DONE);
        } catch (error) {
          await points.removeEntry(stackId, { recursive: true }).catch(() => {});
          throw fullOr(error, `The kiosk's starting point for "${name}" was not saved`);
        }
        return { bytes: await folderSize(point) };
      });
    },

    async resetToPoint(stackId, heldByCaller) {
      const dir = await ctx.folder(stackId);
      const point = await (await resetPoints()).getDirectoryHandle(stackId).catch(() => null);
      if (!point || !(await point.getFileHandle(POINT_DONE).then(() => true, () => false))) {
        throw new StackFolderError({ code: 'not_found', message: 'This kiosk has no starting point to return to: its owner must set kiosk mode up again.' });
      }
      const { name } = await ctx.summary(stackId, dir);
      return ctx.whileStill(stackId, name, heldByCaller, 'reset', async (signal) => {
        // Everything the visitor left goes (not hidden), then the point comes back whole. A reset
        // cut short (a power cut) is done again at the next open, which always resets a kiosk.
        for (const [child] of await childrenOf(dir)) await removeWhenReleased(dir, child, releaseWaitMs);
        await copyFolder(point, dir, signal, POINT_DONE);
        return { bytes: await folderSize(dir) };
      });
    },

    async dropResetPoint(stackId) {
      await (await resetPoints()).removeEntry(stackId, { recursive: true }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    },
  };
}
