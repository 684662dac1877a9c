// /workspace's files in the stack's OPFS folder (stacks/<stackId>/, its system space .os/ out of
// sight), as the 9p server reads and writes them. Bytes go through sync access handles, opened
// when first used and closed once the file has been idle a moment: the stack worker replaces a
// user file by moving a new one over it, which an open handle would refuse.
import { folderHandles, named, type DirEntries, type FolderHandles } from './opfs-folder-handles.ts';
import { readAt, syncHandles, writeAt, type SyncHandles } from './opfs-sync-handles.ts';
import { isPartialWrite, sweepPartialWrites } from '../storage/atomic-write.ts';
import { EEXIST, EIO, EISDIR, ENOENT, ENOSPC, ENOTDIR, ENOTEMPTY, errnosOf, FsError, isHidden, MODES_FILE, type FsStat, type WorkspaceFs } from './workspace-fs.ts';

/** The permission bits the guest set are a few bytes a path; a file past this is not the share's. */
const MODES_MAX_BYTES = 4 * 1024 * 1024;

type Movable = FileSystemHandle & { move(dir: FileSystemDirectoryHandle, name: string): Promise<void> };

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

export function opfsWorkspaceFs(stackDir: FileSystemDirectoryHandle): WorkspaceFs {
  const folders = folderHandles(stackDir);
  const files = syncHandles(folders.fileHandle);
  const { dirs, split, dir, forgetDirs, entry } = folders;
  const { open, scheduleClose, close, handleOf } = files;
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
    rename: guarded((from, to) => rename(folders, files, from, to)),
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
    readModes: () => readModes(stackDir),
    writeModes: (modes) => writeModes(stackDir, modes),
  };
}

/** Moves a file or a folder, replacing a file or an empty folder at `to` (see moveFolder). */
async function rename(folders: FolderHandles, files: SyncHandles, from: string, to: string): Promise<void> {
  const { dir, entry, split, forgetDirs } = folders;
  const { open, close } = files;
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
}

/** The permission bits the guest set, as kept in `.os/` (none, torn or too large: the defaults). */
async function readModes(stackDir: FileSystemDirectoryHandle): Promise<Record<string, number>> {
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
}

async function writeModes(stackDir: FileSystemDirectoryHandle, modes: Record<string, number>): Promise<void> {
  const os = await stackDir.getDirectoryHandle('.os', { create: true });
  const writable = await (await os.getFileHandle(MODES_FILE, { create: true })).createWritable();
  await writable.write(JSON.stringify(modes));
  await writable.close();
}
