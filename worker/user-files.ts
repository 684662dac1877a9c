// The stack's user space (documents/, ocr/, extractions/, artifacts/): the files the user and the
// agent work on, and that the computer sees as /workspace. System files live in `.os/` instead.
import { isPartialWrite, whenLetGo, writeWholeFile } from '../storage/atomic-write.ts';
import { sniffMime, SNIFF_BYTES } from './file-kind.ts';
import { BadRequestError } from './request-error.ts';

export interface FileInfo {
  path: string;
  size: number;
  mime: string;
}

export interface UserFiles {
  /** Null when there is no such file. Throws UserPathError for a path outside user space. */
  stat(path: string): Promise<FileInfo | null>;
  /** Throws UserPathError, or NotFoundError when absent. */
  read(path: string): Promise<Uint8Array>;
  /** Creates folders as needed; replaces the file atomically. */
  write(path: string, data: Uint8Array | string): Promise<FileInfo>;
  /** Returns false when there was no such file. */
  remove(path: string): Promise<boolean>;
  /** Every file in user space, sorted by path. */
  list(): Promise<{ path: string; size: number }[]>;
}

const encoder = new TextEncoder();
const toBytes = (data: Uint8Array | string) => (typeof data === 'string' ? encoder.encode(data) : data);

export class UserPathError extends BadRequestError {}

/**
 * A safe relative path in user space, or a UserPathError saying what is wrong with it. Rejects
 * absolute paths, `..`, backslashes, empty segments and the system space `.os/`.
 */
export function normaliseUserPath(path: string): string {
  const trimmed = path.trim().replace(/^\/?workspace\//, '');
  if (!trimmed) throw new UserPathError('The path is empty.');
  if (trimmed.startsWith('/') || trimmed.includes('\\')) throw new UserPathError(`"${path}" must be relative to the user space, e.g. documents/file.pdf.`);
  const parts = trimmed.split('/').filter((part) => part !== '.' && part !== '');
  if (parts.some((part) => part === '..')) throw new UserPathError(`"${path}" may not use "..".`);
  if (parts[0] === '.os') throw new UserPathError('.os/ is the system space; the user space is documents/, ocr/, extractions/ and artifacts/.');
  if (parts.some((part) => part.length > 255 || /[\u0000-\u001f]/.test(part))) throw new UserPathError(`"${path}" is not a valid file name.`);
  return parts.join('/');
}

export function createMemoryUserFiles(files: Record<string, Uint8Array> = {}): UserFiles & { files: Map<string, Uint8Array> } {
  const map = new Map(Object.entries(files));
  return {
    files: map,
    async stat(path) {
      const key = normaliseUserPath(path);
      const bytes = map.get(key);
      return bytes ? { path: key, size: bytes.byteLength, mime: await sniffMime(bytes, key) } : null;
    },
    async read(path) {
      const bytes = map.get(normaliseUserPath(path));
      if (!bytes) throw new DOMException(`No file at ${path}`, 'NotFoundError');
      return bytes;
    },
    async write(path, data) {
      const key = normaliseUserPath(path);
      const bytes = toBytes(data);
      map.set(key, bytes);
      return { path: key, size: bytes.byteLength, mime: await sniffMime(bytes, key) };
    },
    async remove(path) {
      return map.delete(normaliseUserPath(path));
    },
    async list() {
      return [...map.entries()].map(([path, bytes]) => ({ path, size: bytes.byteLength })).sort((a, b) => a.path.localeCompare(b.path));
    },
  };
}

/** User space in the stack's OPFS folder. Worker only. */
export function createOpfsUserFiles(stackDir: FileSystemDirectoryHandle): UserFiles {
  async function fileHandle(path: string): Promise<FileSystemFileHandle | null> {
    const parts = normaliseUserPath(path).split('/');
    let dir = stackDir;
    try {
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
      return await dir.getFileHandle(parts.at(-1)!);
    } catch (error) {
      if (error instanceof DOMException && (error.name === 'NotFoundError' || error.name === 'TypeMismatchError')) return null;
      throw error;
    }
  }
  return {
    async stat(path) {
      const handle = await fileHandle(path);
      if (!handle) return null;
      const file = await handle.getFile();
      const head = new Uint8Array(await file.slice(0, SNIFF_BYTES).arrayBuffer());
      return { path: normaliseUserPath(path), size: file.size, mime: await sniffMime(head, file.name, file.size <= SNIFF_BYTES) };
    },
    async read(path) {
      const handle = await fileHandle(path);
      if (!handle) throw new DOMException(`No file at ${path}`, 'NotFoundError');
      return new Uint8Array(await (await handle.getFile()).arrayBuffer());
    },
    async write(path, data) {
      const key = normaliseUserPath(path);
      const parts = key.split('/');
      let dir = stackDir;
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
      const bytes = toBytes(data);
      await writeWholeFile(dir, parts.at(-1)!, bytes);
      return { path: key, size: bytes.byteLength, mime: await sniffMime(bytes, key) };
    },
    async remove(path) {
      const parts = normaliseUserPath(path).split('/');
      try {
        let dir = stackDir;
        for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
        // The computer may have it open for a moment (its /workspace share).
        await whenLetGo(() => dir.removeEntry(parts.at(-1)!));
        return true;
      } catch (error) {
        if (error instanceof DOMException && error.name === 'NotFoundError') return false;
        throw error;
      }
    },
    async list() {
      const out: { path: string; size: number }[] = [];
      const walk = async (dir: FileSystemDirectoryHandle, prefix: string) => {
        for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
          if ((!prefix && name === '.os') || isPartialWrite(name)) continue;
          if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle, `${prefix}${name}/`);
          else out.push({ path: `${prefix}${name}`, size: (await (handle as FileSystemFileHandle).getFile()).size });
        }
      };
      await walk(stackDir, '');
      return out.sort((a, b) => a.path.localeCompare(b.path));
    },
  };
}

/** UserFiles that report each write and removal (to keep /workspace in the computer in step). */
export function notifyingFiles(files: UserFiles, changed: (path: string) => void): UserFiles {
  return {
    ...files,
    async write(path, data) {
      const info = await files.write(path, data);
      changed(info.path);
      return info;
    },
    async remove(path) {
      const removed = await files.remove(path);
      if (removed) changed(normaliseUserPath(path));
      return removed;
    },
  };
}
