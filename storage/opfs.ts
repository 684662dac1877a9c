// Handles in the origin's private file system: the root and a stack's folder, a folder's entries,
// a path to a folder or a file, and "not found" told apart from other failures.
import { checkStackId, OPFS_ROOT } from './layout.ts';

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };

/** A folder's entries, `[name, handle]`, in the browser's order (`entries()` is in every OPFS but missing from TypeScript's DOM types). */
export function entriesOf(dir: FileSystemDirectoryHandle): AsyncIterable<[string, FileSystemHandle]> {
  return (dir as unknown as Entries).entries();
}

/** A folder's entries read into an array: for removing or renaming while going through them. */
export async function childrenOf(dir: FileSystemDirectoryHandle): Promise<[string, FileSystemHandle][]> {
  const children: [string, FileSystemHandle][] = [];
  for await (const entry of entriesOf(dir)) children.push(entry);
  return children;
}

/** The browser's "no such entry" (or an entry of the other kind where one was asked for). */
export function isNotFound(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'NotFoundError' || name === 'TypeMismatchError';
}

/** The origin's private file system. */
export function opfsRoot(): Promise<FileSystemDirectoryHandle> {
  return navigator.storage.getDirectory();
}

/** The stack's folder, `stacks/<stackId>/` (made when absent); throws on an id that is not one. */
export async function openStackDirectory(stackId: string): Promise<FileSystemDirectoryHandle> {
  checkStackId(stackId);
  const stacks = await (await opfsRoot()).getDirectoryHandle(OPFS_ROOT.stacks, { create: true });
  return stacks.getDirectoryHandle(stackId, { create: true });
}

/**
 * The folder at `path` (`a/b/c`, relative to `root`; '' is `root`). With `create`, missing folders
 * are made; without, returns null when one is missing. Other failures throw.
 */
export async function directoryAt(root: FileSystemDirectoryHandle, path: string, options: { create?: boolean } = {}): Promise<FileSystemDirectoryHandle | null> {
  let dir = root;
  for (const part of path.split('/').filter(Boolean)) {
    try {
      dir = await dir.getDirectoryHandle(part, { create: options.create === true });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }
  return dir;
}

/** The file at `path` (relative to `root`), as it is now; null when it, or a folder on the way, is absent or cannot be read. */
export async function fileAt(root: FileSystemDirectoryHandle, path: string): Promise<File | null> {
  const parts = path.split('/');
  try {
    const dir = await directoryAt(root, parts.slice(0, -1).join('/'));
    return dir ? await (await dir.getFileHandle(parts.at(-1)!)).getFile() : null;
  } catch {
    return null;
  }
}
