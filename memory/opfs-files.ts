// StackFiles on the Origin Private File System: `stacks/<stackId>/` under the origin's root.
// Worker code (async OPFS APIs); each write replaces its file whole (storage/atomic-write.ts).
import { replaceFile } from '../storage/atomic-write.ts';
import { readText } from '../storage/json-files.ts';
import { normalizeStackPath } from '../storage/layout.ts';
import { childrenOf, directoryAt, isNotFound, openStackDirectory } from '../storage/opfs.ts';
import type { StackFiles } from './stack-files.ts';

export async function openOpfsStackFiles(stackId: string): Promise<StackFiles> {
  const stackDir = await openStackDirectory(stackId);

  function split(path: string): { parents: string; name: string } {
    const parts = normalizeStackPath(path).split('/').filter(Boolean);
    const name = parts.pop();
    if (!name) throw new Error(`"${path}" names no file.`);
    return { parents: parts.join('/'), name };
  }

  return {
    async readText(path) {
      const { parents, name } = split(path);
      const dir = await directoryAt(stackDir, parents);
      return dir ? readText(dir, name) : undefined;
    },

    async writeText(path, text) {
      const { parents, name } = split(path);
      await replaceFile((await directoryAt(stackDir, parents, { create: true }))!, name, text);
    },

    async makeDir(path) {
      await directoryAt(stackDir, normalizeStackPath(path), { create: true });
    },

    async list(path) {
      const dir = await directoryAt(stackDir, normalizeStackPath(path));
      if (!dir) return [];
      const entries = (await childrenOf(dir)).map(([name, handle]) => ({ name, kind: handle.kind }));
      return entries.sort(byName);
    },

    async remove(path) {
      const { parents, name } = split(path);
      const dir = await directoryAt(stackDir, parents);
      try {
        await dir?.removeEntry(name, { recursive: true });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}

/** Code-point order, like `ls` in the C locale: the same on every machine. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
