// A stack as one `.stack` file, in the stacks worker: exporting a stack (whole, or as a template)
// and importing one as a new stack, checked whole before it is listed (stack-file/ does the work).
import { STACK_PATHS } from '../storage/layout.ts';
import { folderSize } from '../storage/walk.ts';
import { SNAPSHOT_DIR, StackFileError, totalSize } from './stack-file/format.ts';
import { checkName, fallbackName, fullOr, removeWhenReleased, StackFolderError, type FoldersContext, type StackFolders } from './stack-folders-context.ts';
import { writeConfig, writeMeta } from './stack-meta.ts';
import { newTrustRecord, TRUST_FILE } from './trust-record.ts';

export function stackFileOperations(ctx: FoldersContext): Pick<StackFolders, 'exportStack' | 'exportContents' | 'importStack'> {
  const { deps, now } = ctx;
  return {
    async exportStack(stackId, options) {
      const dir = await ctx.folder(stackId);
      const { template, includeImage, ...rest } = options;
      const name = template ? checkName(template.name) : (await ctx.summary(stackId, dir)).name;
      try {
        // Only the tab that closed the stack for it (its databases copied, its computer saved) exports it whole; a template reads only files no worker holds.
        // The zip library and zstd load when a file is made or opened, not with the stack list.
        const { exportStack } = await import('./stack-file/export.ts');
        const image = includeImage && !template && deps.root ? { includeImage: { ...includeImage, root: await deps.root() } } : {};
        const written = await exportStack({ stack: dir, name, ...rest, ...image, ...(template ? { template: { description: template.description.trim().slice(0, 500) } } : {}) });
        return { name, bytes: written.bytes };
      } catch (error) {
        if (error instanceof StackFileError) throw new StackFolderError({ code: error.code === 'cancelled' ? 'aborted' : 'bad_request', message: error.message });
        throw fullOr(error, `"${name}" was not exported`);
      } finally {
        const system = await dir.getDirectoryHandle(STACK_PATHS.system).catch(() => null);
        await system?.removeEntry(SNAPSHOT_DIR.split('/')[1]!, { recursive: true }).catch(() => {});
      }
    },

    async exportContents(stackId) {
      const { exportContents } = await import('./stack-file/export-plan.ts');
      return exportContents(await ctx.folder(stackId));
    },

    async importStack(file, options) {
      const id = ctx.newId();
      const stacks = await deps.stacksDir();
      const made = await deps.locks.withLock(id, async () => {
        const target = await stacks.getDirectoryHandle(id, { create: true });
        try {
          // Unfinished until the last file passed its checks: list() removes what a killed tab left.
          await writeMeta(target, { name: 'Imported stack', created_at: now(), copying: true });
          const { importStackFile } = await import('./stack-file/import.ts');
          const imported = await importStackFile({
            ...(deps.root ? { root: await deps.root() } : {}),
            file,
            target,
            appImage: options.appImage,
            estimate: await deps.estimate(),
            signal: options.signal,
            allowLarge: options.allowLarge === true,
            ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          });
          // Made elsewhere: restricted until its owner reviews it (trust.ts), whatever the file
          // said of itself. Written before the stack counts, so no open ever sees it trusted.
          if (!options.builtIn) await writeConfig(target, TRUST_FILE, newTrustRecord(imported.manifest.template ? 'template_file' : 'stack_file', options.fileName ?? null, now()));
          // A name from the file is told apart from the stacks here: "Receipts" beside "Receipts" is "Receipts (imported)".
          const taken = (await ctx.stackIds()).filter((other) => other.id !== id && !other.meta?.copying).map((other) => other.meta?.name ?? fallbackName(other.id));
          const name = options.name ? checkName(options.name) : distinctName(checkName(shownName(imported.manifest.stack.name) || 'Imported stack'), taken);
          await writeMeta(target, { name, created_at: now() });
          return { stack: { id, name, bytes: Math.max(totalSize(imported.manifest), await folderSize(target)) }, layout: imported.layout };
        } catch (error) {
          // The file that failed its check lets go of its swap file a moment after it is aborted.
          await removeWhenReleased(stacks, id, ctx.releaseWaitMs).catch(() => {});
          if (error instanceof StackFileError) throw new StackFolderError({ code: error.code === 'cancelled' ? 'aborted' : error.code === 'storage' || error.code === 'too_large' ? error.code : 'bad_request', message: error.message });
          throw fullOr(error, 'The stack was not imported');
        }
      });
      if (!made.held) throw new StackFolderError({ code: 'internal', message: 'The new stack id is in use; try again.' });
      return made.value;
    },
  };
}

/**
 * `name`, else "name (imported)", "name (imported 2)", …: the first no stack in `taken` has (case
 * and Unicode forms aside), within the 60 characters a name may have.
 */
export function distinctName(name: string, taken: readonly string[]): string {
  const fold = (text: string) => text.normalize('NFC').toLowerCase();
  const used = new Set(taken.map(fold));
  if (!used.has(fold(name))) return name;
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? ' (imported)' : ` (imported ${n})`;
    const candidate = `${name.slice(0, 60 - suffix.length).trimEnd()}${suffix}`;
    if (!used.has(fold(candidate))) return candidate;
  }
}

/** A name from a file as it will be shown: without control characters or ones that turn the text's direction around. */
function shownName(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g, '').normalize('NFC').trim();
}

