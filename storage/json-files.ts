// Small JSON files, each replaced whole: a stack's own state (`.os/config/`), this browser's
// (`device/`), and records read at a path. In OPFS, or in memory for unit tests.
import { OPFS_ROOT, STACK_PATHS } from './layout.ts';
import { replaceFile } from './atomic-write.ts';
import { directoryAt, fileAt, isNotFound, openStackDirectory, opfsRoot } from './opfs.ts';

/** A folder of JSON files, by name. */
export interface StackStorage {
  /**
   * Returns undefined when the file is absent. A file that does not parse is set aside
   * (renamed `<name>.corrupt-<time>`) rather than overwritten, and undefined is returned.
   */
  readJson<T>(name: string): Promise<T | undefined>;
  /** Replaces the file atomically: readers see the old or the new content, never a mix. */
  writeJson(name: string, value: unknown): Promise<void>;
}

export function createMemoryStorage(initial: Record<string, string> = {}): StackStorage & {
  files: Map<string, string>;
} {
  const files = new Map(Object.entries(initial));
  return {
    files,
    async readJson<T>(name: string) {
      const text = files.get(name);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as T;
      } catch {
        files.delete(name);
        files.set(`${name}.corrupt-${Date.now()}`, text);
        return undefined;
      }
    },
    async writeJson(name, value) {
      files.set(name, JSON.stringify(value));
    },
  };
}

/** The JSON files of an OPFS folder. */
export function opfsJsonStorage(dir: FileSystemDirectoryHandle): StackStorage {
  return {
    async readJson<T>(name: string) {
      const text = await readText(dir, name);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as T;
      } catch {
        await replaceFile(dir, `${name}.corrupt-${Date.now()}`, text);
        await dir.removeEntry(name);
        return undefined;
      }
    },
    async writeJson(name, value) {
      await replaceFile(dir, name, JSON.stringify(value));
    },
  };
}

/** JSON state in the stack's system space, `stacks/<stackId>/.os/config/`. */
export async function openOpfsStorage(stackId: string): Promise<StackStorage> {
  return opfsJsonStorage((await directoryAt(await openStackDirectory(stackId), STACK_PATHS.config, { create: true }))!);
}

/** JSON state of this browser as a whole, shared by its stacks (the device's proxy credentials): `device/`. */
export async function openDeviceStorage(): Promise<StackStorage> {
  return opfsJsonStorage(await (await opfsRoot()).getDirectoryHandle(OPFS_ROOT.device, { create: true }));
}

/** The text of `dir/name`; undefined when absent. Other failures throw. */
export async function readText(dir: FileSystemDirectoryHandle, name: string): Promise<string | undefined> {
  try {
    return await (await (await dir.getFileHandle(name)).getFile()).text();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The JSON at `path` (relative to `root`); null when it is absent, unreadable or not JSON. Never throws. */
export async function readJsonAt(root: FileSystemDirectoryHandle, path: string): Promise<unknown> {
  const file = await fileAt(root, path);
  if (!file) return null;
  try {
    return JSON.parse(await file.text()) as unknown;
  } catch {
    return null;
  }
}

/** Replaces the JSON at `path` (relative to `root`) whole, making the folders on the way. */
export async function writeJsonAt(root: FileSystemDirectoryHandle, path: string, value: unknown): Promise<void> {
  const parts = path.split('/');
  const dir = (await directoryAt(root, parts.slice(0, -1).join('/'), { create: true }))!;
  await replaceFile(dir, parts.at(-1)!, JSON.stringify(value));
}
