// Going through a folder tree: every file under a folder with its path, the tree's size, and a
// copy of a tree into another folder.
import { copyFileInto } from './atomic-write.ts';
import { entriesOf } from './opfs.ts';

/** A file found by `listFiles`: its path from the folder walked (`a/b.txt`), its name and handle. */
export interface FoundFile {
  path: string;
  name: string;
  handle: FileSystemFileHandle;
}

export interface ListOptions {
  /** Leaves out a file, or a folder and everything under it, by its path from the folder walked. */
  skip?(path: string, kind: 'file' | 'directory'): boolean;
  /** Each folder's entries in code-point order of their names (else the browser's order). */
  sorted?: boolean;
  /** Put before every path (`stack/`), as when `dir` were itself under such a folder. */
  prefix?: string;
}

/**
 * Every file under `dir`, depth first, each folder's files where the folder is in its listing.
 * Sub-folders are asked for at once: one after another, each waits its turn in a busy storage.
 */
export async function listFiles(dir: FileSystemDirectoryHandle, options: ListOptions = {}): Promise<FoundFile[]> {
  const children: [string, FileSystemHandle][] = [];
  for await (const entry of entriesOf(dir)) children.push(entry);
  if (options.sorted) children.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const found = children.map(async ([name, handle]): Promise<FoundFile[]> => {
    const path = options.prefix ? `${options.prefix}/${name}` : name;
    if (options.skip?.(path, handle.kind)) return [];
    if (handle.kind === 'directory') return listFiles(handle as FileSystemDirectoryHandle, { ...options, prefix: path });
    return [{ path, name, handle: handle as FileSystemFileHandle }];
  });
  return (await Promise.all(found)).flat();
}

/** The sum of the sizes of every file under `dir`. Files held open by a worker are read too; one that cannot be read counts 0. */
export async function folderSize(dir: FileSystemDirectoryHandle): Promise<number> {
  let total = 0;
  for await (const [, handle] of entriesOf(dir)) {
    if (handle.kind === 'directory') total += await folderSize(handle as FileSystemDirectoryHandle);
    else total += await (handle as FileSystemFileHandle).getFile().then((file) => file.size, () => 0);
  }
  return total;
}

/**
 * Copies every file and folder of `from` into `to`, whatever they are (databases, user files, the
 * computer's disk and state), streaming each file; `skip` is a path (or paths) not to copy. Stops
 * when `signal` aborts.
 */
export async function copyFolder(from: FileSystemDirectoryHandle, to: FileSystemDirectoryHandle, signal: AbortSignal, skip: string | string[] = [], prefix = ''): Promise<void> {
  for await (const [name, handle] of entriesOf(from)) {
    if (signal.aborted) throw signal.reason;
    const path = prefix ? `${prefix}/${name}` : name;
    if (typeof skip === 'string' ? path === skip : skip.includes(path)) continue;
    if (handle.kind === 'directory') {
      await copyFolder(handle as FileSystemDirectoryHandle, await to.getDirectoryHandle(name, { create: true }), signal, skip, path);
      continue;
    }
    await copyFileInto(await (handle as FileSystemFileHandle).getFile(), to, name, signal);
  }
}
