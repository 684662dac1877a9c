// StackFiles on the Origin Private File System: `stacks/<stackId>/` under the origin's root.
// Worker code (async OPFS APIs); writes go through createWritable, which swaps in on close.
import { checkStackId, normalizeStackPath, STACKS_DIR } from './layout.ts';
import type { StackFiles } from './stack-files.ts';

export async function openOpfsStackFiles(stackId: string): Promise<StackFiles> {
  const root = await navigator.storage.getDirectory();
  const stacks = await root.getDirectoryHandle(STACKS_DIR, { create: true });
  const stackDir = await stacks.getDirectoryHandle(checkStackId(stackId), { create: true });

  async function dirOf(parts: string[], create: boolean): Promise<FileSystemDirectoryHandle | undefined> {
    let dir = stackDir;
    for (const part of parts) {
      try {
        dir = await dir.getDirectoryHandle(part, { create });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    }
    return dir;
  }

  function split(path: string): { parents: string[]; name: string } {
    const parts = normalizeStackPath(path).split('/').filter(Boolean);
    const name = parts.pop();
    if (!name) throw new Error(`"${path}" names no file.`);
    return { parents: parts, name };
  }

  return {
    async readText(path) {
      const { parents, name } = split(path);
      const dir = await dirOf(parents, false);
      if (!dir) return undefined;
      try {
        return await (await (await dir.getFileHandle(name)).getFile()).text();
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },

    async writeText(path, text) {
      const { parents, name } = split(path);
      const dir = (await dirOf(parents, true))!;
      const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
      try {
        await writable.write(text);
        await writable.close();
      } catch (error) {
        await writable.abort().catch(() => {});
        throw error;
      }
    },

    async makeDir(path) {
      await dirOf(normalizeStackPath(path).split('/').filter(Boolean), true);
    },

    async list(path) {
      const dir = await dirOf(normalizeStackPath(path).split('/').filter(Boolean), false);
      if (!dir) return [];
      const entries: { name: string; kind: 'file' | 'directory' }[] = [];
      // `values()` is in every OPFS implementation but missing from TypeScript's DOM types.
      const iterable = dir as unknown as { values(): AsyncIterable<FileSystemHandle> };
      for await (const handle of iterable.values()) entries.push({ name: handle.name, kind: handle.kind });
      return entries.sort(byName);
    },

    async remove(path) {
      const { parents, name } = split(path);
      const dir = await dirOf(parents, false);
      try {
        await dir?.removeEntry(name, { recursive: true });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  return name === 'NotFoundError' || name === 'TypeMismatchError';
}

/** Code-point order, like `ls` in the C locale: the same on every machine. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
