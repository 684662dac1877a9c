// /workspace's files in the stack's OPFS folder (stacks/<stackId>/, its system space .os/ out of
// sight), as the 9p server reads and writes them. Bytes go through sync access handles, opened
// when first used and closed once the file has been idle a moment: the stack worker replaces a
// user file by moving a new one over it, which an open handle would refuse.
import { EEXIST, EIO, EISDIR, ENOENT, ENOSPC, ENOTDIR, ENOTEMPTY, errnosOf, FsError, isHidden, MODES_FILE, type FsStat, type WorkspaceFs } from './workspace-fs.ts';
import { isPartialWrite, sweepPartialWrites } from './opfs-write.ts';

/** The permission bits the guest set are a few bytes a path; a file past this is not the share's. */
const MODES_MAX_BYTES = 4 * 1024 * 1024;

type DirEntries = FileSystemDirectoryHandle & { entries(): AsyncIterable<[string, FileSystemHandle]> };
type Movable = FileSystemHandle & { move(dir: FileSystemDirectoryHandle, name: string): Promise<void> };

/** A handle unused this long is closed (ms). */
const IDLE_CLOSE_MS = 300;
/** How long an open waits for another worker (the stack worker's move) to let the file go. */
const HELD_WAIT_MS = 3000;

const named = (error: unknown, ...names: string[]) => error instanceof DOMException && names.includes(error.name);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A storage failure as the errno the guest should see. */
function toFsError(error: unknown, path: string): FsError {
  if (error instanceof FsError) return error;
  if (named(error, 'NotFoundError')) return new FsError(ENOENT, `"${path}" is not there`);
  if (named(error, 'TypeMismatchError')) return new FsError(ENOTDIR, `"${path}" is not what was expected`);
  if (named(error, 'QuotaExceededError')) return new FsError(ENOSPC, "the browser's storage is full");
  if (named(error, 'InvalidModificationError')) return new FsError(ENOTEMPTY, `"${path}" is not empty`);
  if (error instanceof TypeError) return new FsError(22, `"${path}": ${error.message}`);
  return new FsError(EIO, `"${path}": ${(error as Error)?.message ?? String(error)}`);
}

interface Open {
  handle: FileSystemSyncAccessHandle;
  timer: ReturnType<typeof setTimeout> | null;
  /** When it was last written (a sync handle's writes do not show in getFile() until it closes). */
  writtenAt: number | null;
}

/**
 * Chromium moves files, not folders: a folder is made anew at its destination and its files are
 * moved into it (no bytes copied), folder by folder. The emptied source is the caller's to remove.
 */
async function moveFolder(source: FileSystemDirectoryHandle, into: FileSystemDirectoryHandle, name: string): Promise<void> {
  const target = await into.getDirectoryHandle(name, { create: true });
  const entries: [string, FileSystemHandle][] = [];
  for await (const entry of (source as DirEntries).entries()) entries.push(entry);
  for (const [child, handle] of entries) {
    if (handle.kind === 'file') await (handle as Movable).move(target, child);
    else await moveFolder(handle as FileSystemDirectoryHandle, target, child);
  }
}

/** Reads into `into` from `offset` until it is full or the file ends; the bytes read. */
function readAt(handle: FileSystemSyncAccessHandle, offset: number, into: Uint8Array): number {
  const wanted = Math.max(0, Math.min(into.byteLength, handle.getSize() - offset));
  let done = 0;
  while (done < wanted) {
    const n = handle.read(into.subarray(done, wanted), { at: offset + done });
    if (n <= 0) break;
    done += n;
  }
  return done;
}

function writeAt(handle: FileSystemSyncAccessHandle, offset: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.byteLength) {
    const n = handle.write(bytes.subarray(done), { at: offset + done });
    if (n <= 0) throw new FsError(ENOSPC, "the browser's storage is full");
    done += n;
  }
}

export function opfsWorkspaceFs(stackDir: FileSystemDirectoryHandle): WorkspaceFs {
  const dirs = new Map<string, FileSystemDirectoryHandle>([['', stackDir]]);
  const open = new Map<string, Open>();
  const opening = new Map<string, Promise<Open>>();

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

  function scheduleClose(path: string, o: Open) {
    if (o.timer) clearTimeout(o.timer);
    o.timer = setTimeout(() => close(path), IDLE_CLOSE_MS);
  }

  function close(path: string) {
    const o = open.get(path);
    if (!o) return;
    open.delete(path);
    if (o.timer) clearTimeout(o.timer);
    try {
      o.handle.flush();
    } finally {
      o.handle.close();
    }
  }

  async function handleOf(path: string): Promise<Open> {
    const existing = open.get(path);
    if (existing) {
      scheduleClose(path, existing);
      return existing;
    }
    let pending = opening.get(path);
    if (!pending) {
      pending = (async () => {
        const file = await fileHandle(path);
        const began = Date.now();
        for (;;) {
          try {
            const o: Open = { handle: await file.createSyncAccessHandle(), timer: null, writtenAt: null };
            open.set(path, o);
            return o;
          } catch (error) {
            // Another worker has it for a moment (the stack worker replacing it).
            if (!named(error, 'NoModificationAllowedError') || Date.now() - began > HELD_WAIT_MS) throw error;
            await sleep(20);
          }
        }
      })().finally(() => opening.delete(path));
      opening.set(path, pending);
    }
    const o = await pending;
    scheduleClose(path, o);
    return o;
  }

  const guarded = errnosOf(toFsError);

  return {
    stat: guarded(async (path): Promise<FsStat | null> => {
      const found = await entry(path);
      if (!found) return null;
      if (found.kind === 'directory') return { kind: 'dir', size: 0, mtimeMs: 0 };
      const o = open.get(path);
      if (o) return { kind: 'file', size: o.handle.getSize(), mtimeMs: o.writtenAt ?? (await (found as FileSystemFileHandle).getFile()).lastModified };
      const file = await (found as FileSystemFileHandle).getFile();
      return { kind: 'file', size: file.size, mtimeMs: file.lastModified };
    }),
    list: guarded(async (path) => {
      const out: { name: string; kind: 'file' | 'dir' }[] = [];
      const folder = await dir(path);
      let partial = false;
      for await (const [name, handle] of (folder as DirEntries).entries()) {
        if (isPartialWrite(name)) partial = true;
        if (isHidden(path, name)) continue;
        out.push({ name, kind: handle.kind === 'directory' ? 'dir' : 'file' });
      }
      // What a tab killed mid-write left (over ten minutes old) goes when its folder is listed.
      if (partial) void sweepPartialWrites(folder).catch(() => {});
      return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    }),
    read: guarded(async (path, offset: number, length: number) => {
      const { handle } = await handleOf(path);
      const bytes = new Uint8Array(Math.max(0, Math.min(length, handle.getSize() - offset)));
      return bytes.subarray(0, readAt(handle, offset, bytes));
    }),
    write: guarded(async (path, offset: number, bytes: Uint8Array) => {
      const o = await handleOf(path);
      writeAt(o.handle, offset, bytes);
      o.writtenAt = Date.now();
    }),
    readNow(path, offset, into) {
      const o = open.get(path);
      if (!o) return null;
      try {
        scheduleClose(path, o);
        return readAt(o.handle, offset, into);
      } catch (error) {
        throw toFsError(error, path);
      }
    },
    writeNow(path, offset, bytes) {
      const o = open.get(path);
      if (!o) return false;
      try {
        scheduleClose(path, o);
        writeAt(o.handle, offset, bytes);
        o.writtenAt = Date.now();
        return true;
      } catch (error) {
        throw toFsError(error, path);
      }
    },
    truncate: guarded(async (path, size: number) => {
      const o = await handleOf(path);
      o.handle.truncate(size);
      o.writtenAt = Date.now();
    }),
    createFile: guarded(async (path) => {
      if (await entry(path)) throw new FsError(EEXIST, `"${path}" is there already`);
      const [parent, name] = split(path);
      await (await dir(parent)).getFileHandle(name, { create: true });
    }),
    mkdir: guarded(async (path) => {
      if (await entry(path)) throw new FsError(EEXIST, `"${path}" is there already`);
      const [parent, name] = split(path);
      dirs.set(path, await (await dir(parent)).getDirectoryHandle(name, { create: true }));
    }),
    remove: guarded(async (path) => {
      close(path);
      const [parent, name] = split(path);
      const found = await entry(path);
      if (!found) throw new FsError(ENOENT, `"${path}" is not there`);
      await (await dir(parent)).removeEntry(name); // a folder only when empty
      forgetDirs(path);
    }),
    rename: guarded(async (from, to) => {
      const source = await entry(from);
      if (!source) throw new FsError(ENOENT, `"${from}" is not there`);
      const target = await entry(to);
      const [toParent, toName] = split(to);
      if (target) {
        if (source.kind === 'directory' && target.kind !== 'directory') throw new FsError(ENOTDIR, `"${to}" is not a folder`);
        if (source.kind !== 'directory' && target.kind === 'directory') throw new FsError(EISDIR, `"${to}" is a folder`);
        if (target.kind === 'directory') {
          // POSIX: a folder replaces only an empty one.
          for await (const _ of (target as DirEntries).entries()) throw new FsError(ENOTEMPTY, `"${to}" is not empty`);
        }
        close(to);
        await (await dir(toParent)).removeEntry(toName);
        forgetDirs(to);
      }
      // Open handles on what moves are closed first (a move of an open file is refused).
      for (const path of [...open.keys()]) if (path === from || path.startsWith(`${from}/`)) close(path);
      const into = await dir(toParent);
      if (source.kind === 'file') await (source as Movable).move(into, toName);
      else {
        await moveFolder(source as FileSystemDirectoryHandle, into, toName);
        const [fromParent, fromName] = split(from);
        await (await dir(fromParent)).removeEntry(fromName, { recursive: true });
      }
      forgetDirs(from);
    }),
    flush: guarded(async (path) => {
      open.get(path)?.handle.flush();
    }),
    async release(path) {
      if (path === undefined) {
        for (const key of [...open.keys()]) close(key);
        dirs.clear();
        dirs.set('', stackDir);
        return;
      }
      for (const key of [...open.keys()]) if (key === path || key.startsWith(`${path}/`)) close(key);
      forgetDirs(path);
    },
    async space() {
      const { quota = 0, usage = 0 } = await navigator.storage.estimate();
      return { total: quota, free: Math.max(0, quota - usage) };
    },
    async readModes() {
      try {
        const file = await (await (await stackDir.getDirectoryHandle('.os')).getFileHandle(MODES_FILE)).getFile();
        // It may have come in a stack file: one far larger than any guest's chmods make is not read.
        if (file.size > MODES_MAX_BYTES) return {};
        const value = JSON.parse(await file.text()) as unknown;
        if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
        return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, number] => Number.isInteger(entry[1])));
      } catch {
        return {}; // none yet, or torn: the defaults
      }
    },
    async writeModes(modes) {
      const os = await stackDir.getDirectoryHandle('.os', { create: true });
      const writable = await (await os.getFileHandle(MODES_FILE, { create: true })).createWritable();
      await writable.write(JSON.stringify(modes));
      await writable.close();
    },
  };
}
