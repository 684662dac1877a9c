// The folder handles of a stack's OPFS folder by path, cached as the 9p server walks it: a cached
// handle of a folder removed and made again finds nothing, so a miss checks it is still the one.

export type DirEntries = FileSystemDirectoryHandle & { entries(): AsyncIterable<[string, FileSystemHandle]> };

/** Whether `error` is a DOMException of one of these names. */
export const named = (error: unknown, ...names: string[]) => error instanceof DOMException && names.includes(error.name);

export interface FolderHandles {
  /** The cache: '' is the stack's folder. */
  readonly dirs: Map<string, FileSystemDirectoryHandle>;
  /** A path as [its folder, its name]. */
  split(path: string): [string, string];
  dir(path: string): Promise<FileSystemDirectoryHandle>;
  /** Forgets folder handles at or under `path` (it moved or went). */
  forgetDirs(path: string): void;
  fileHandle(path: string): Promise<FileSystemFileHandle>;
  /** The file or folder at `path`, or null when nothing is there. */
  entry(path: string): Promise<FileSystemHandle | null>;
}

export function folderHandles(stackDir: FileSystemDirectoryHandle): FolderHandles {
  const dirs = new Map<string, FileSystemDirectoryHandle>([['', stackDir]]);

  const split = (path: string): [string, string] => {
    const at = path.lastIndexOf('/');
    return [path.slice(0, Math.max(0, at)), path.slice(at + 1)];
  };

  async function dir(path: string): Promise<FileSystemDirectoryHandle> {
    const known = dirs.get(path);
    if (known) return known;
    const [parent, name] = split(path);
    const handle = await (await dir(parent)).getDirectoryHandle(name);
    dirs.set(path, handle);
    return handle;
  }

  /** Forgets folder handles at or under `path` (it moved or went). */
  function forgetDirs(path: string) {
    for (const key of [...dirs.keys()]) if (key !== '' && (key === path || key.startsWith(`${path}/`))) dirs.delete(key);
  }

  async function fileHandle(path: string): Promise<FileSystemFileHandle> {
    const [parent, name] = split(path);
    return (await dir(parent)).getFileHandle(name);
  }

  async function entry(path: string): Promise<FileSystemHandle | null> {
    if (path === '') return stackDir;
    const [parent, name] = split(path);
    let folder: FileSystemDirectoryHandle;
    try {
      folder = await dir(parent);
    } catch (error) {
      if (named(error, 'NotFoundError', 'TypeMismatchError')) return null;
      throw error;
    }
    try {
      return await folder.getFileHandle(name);
    } catch (error) {
      if (!named(error, 'TypeMismatchError', 'NotFoundError')) throw error;
      if (named(error, 'NotFoundError')) {
        // A cached folder handle of a folder that was removed and made again finds nothing.
        if (parent !== '' && !(await stillThere(parent))) return entry(path);
        return null;
      }
    }
    return folder.getDirectoryHandle(name).catch((error: unknown) => {
      if (named(error, 'NotFoundError', 'TypeMismatchError')) return null;
      throw error;
    });
  }

  /** Whether the cached handle of `path` is still the folder at that path (else it is forgotten). */
  async function stillThere(path: string): Promise<boolean> {
    const cached = dirs.get(path);
    if (!cached) return true;
    dirs.delete(path);
    try {
      const fresh = await dir(path);
      if (await fresh.isSameEntry(cached)) return true;
    } catch {
      // gone
    }
    forgetDirs(path);
    return false;
  }

  return { dirs, split, dir, forgetDirs, fileHandle, entry };
}
