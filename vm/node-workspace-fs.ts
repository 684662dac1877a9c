// /workspace's files in a directory on disk: the Node stand-in for the stack's OPFS folder (the
// image build, tests and benchmarks), with the same rules (.os hidden, errors as errnos).
import { open, mkdir, readdir, readFile, rename, rm, rmdir, stat, statfs, truncate, writeFile } from 'node:fs/promises';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { EEXIST, EIO, ENOENT, ENOSPC, ENOTDIR, ENOTEMPTY, EISDIR, errnosOf, FsError, isHidden, MODES_FILE, type WorkspaceFs } from './workspace-fs.ts';

const ERRNO: Record<string, number> = { ENOENT, EEXIST, ENOTDIR, ENOTEMPTY, EISDIR, ENOSPC };

function toFsError(error: unknown, path: string): FsError {
  if (error instanceof FsError) return error;
  const code = (error as NodeJS.ErrnoException)?.code;
  return new FsError((code ? ERRNO[code] : undefined) ?? EIO, `"${path}": ${(error as Error)?.message ?? String(error)}`);
}

export function nodeWorkspaceFs(root: string): WorkspaceFs {
  const full = (path: string) => join(root, path);
  const guarded = errnosOf(toFsError);
  return {
    stat: guarded(async (path) => {
      try {
        const s = await stat(full(path));
        return { kind: s.isDirectory() ? 'dir' : 'file', size: s.isDirectory() ? 0 : s.size, mtimeMs: s.mtimeMs };
      } catch (error) {
        if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return null;
        throw error;
      }
    }),
    list: guarded(async (path) => {
      const entries = await readdir(full(path), { withFileTypes: true });
      return entries
        .filter((e) => !isHidden(path, e.name))
        .map((e) => ({ name: e.name, kind: e.isDirectory() ? ('dir' as const) : ('file' as const) }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    }),
    read: guarded(async (path, offset: number, length: number) => {
      const file = await open(full(path), 'r');
      try {
        const bytes = new Uint8Array(length);
        const { bytesRead } = await file.read(bytes, 0, length, offset);
        return bytes.subarray(0, bytesRead);
      } finally {
        await file.close();
      }
    }),
    write: guarded(async (path, offset: number, bytes: Uint8Array) => {
      const file = await open(full(path), 'r+');
      try {
        await file.write(bytes, 0, bytes.byteLength, offset);
      } finally {
        await file.close();
      }
    }),
    readNow(path, offset, into) {
      try {
        const fd = openSync(full(path), 'r');
        try {
          let done = 0;
          for (let n = 1; n > 0 && done < into.byteLength; done += n) n = readSync(fd, into, done, into.byteLength - done, offset + done);
          return done;
        } finally {
          closeSync(fd);
        }
      } catch (error) {
        throw toFsError(error, path);
      }
    },
    writeNow(path, offset, bytes) {
      try {
        const fd = openSync(full(path), 'r+');
        try {
          writeSync(fd, bytes, 0, bytes.byteLength, offset);
        } finally {
          closeSync(fd);
        }
        return true;
      } catch (error) {
        throw toFsError(error, path);
      }
    },
    truncate: guarded(async (path, size: number) => truncate(full(path), size)),
    createFile: guarded(async (path) => writeFile(full(path), new Uint8Array(0), { flag: 'wx' })),
    mkdir: guarded(async (path) => {
      await mkdir(full(path));
    }),
    remove: guarded(async (path) => {
      const s = await stat(full(path));
      if (s.isDirectory()) await rmdir(full(path));
      else await rm(full(path));
    }),
    rename: guarded(async (from, to) => rename(full(from), full(to))),
    flush: async () => {},
    release: async () => {},
    async space() {
      const s = await statfs(root);
      return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
    },
    async readModes() {
      try {
        return JSON.parse(await readFile(join(root, '.os', MODES_FILE), 'utf8')) as Record<string, number>;
      } catch {
        return {};
      }
    },
    async writeModes(modes) {
      await mkdir(join(root, '.os'), { recursive: true });
      await writeFile(join(root, '.os', MODES_FILE), JSON.stringify(modes));
    },
  };
}
