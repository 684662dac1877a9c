// What the /workspace server needs of a folder (`WorkspaceFs`), the errnos its failures carry
// (`FsError`), and the names the guest never sees: the contract the OPFS and Node folders meet.
import { isPartialWrite } from '../storage/atomic-write.ts';

export const EPERM = 1;
export const ENOENT = 2;
export const EIO = 5;
export const EBADF = 9;
export const EACCES = 13;
export const EBUSY = 16;
export const EEXIST = 17;
export const ENOTDIR = 20;
export const EISDIR = 21;
export const EINVAL = 22;
export const ENOSPC = 28;
export const EROFS = 30;
export const ENAMETOOLONG = 36;
export const ENOTEMPTY = 39;
export const EPROTO = 71;
export const EOPNOTSUPP = 95;

/** An error the guest sees as this errno. */
export class FsError extends Error {
  override readonly name = 'FsError';
  constructor(
    readonly errno: number,
    message: string,
  ) {
    super(message);
  }
}

/** Wraps a WorkspaceFs method so that whatever it throws reaches the server as an FsError. */
export function errnosOf(toFsError: (error: unknown, path: string) => FsError) {
  return <A extends unknown[], R>(fn: (path: string, ...rest: A) => Promise<R>) =>
    async (path: string, ...rest: A): Promise<R> => {
      try {
        return await fn(path, ...rest);
      } catch (error) {
        throw toFsError(error, path);
      }
    };
}

export interface FsStat {
  kind: 'file' | 'dir';
  size: number;
  /** ms since the epoch. */
  mtimeMs: number;
}

/**
 * The stack's folder as the server needs it. Paths are relative ('' is /workspace itself), made
 * of names the server checked. Failures throw FsError (anything else is EIO to the guest).
 */
export interface WorkspaceFs {
  stat(path: string): Promise<FsStat | null>;
  /** The folder's entries, without what the guest must not see (the system space, partial writes). */
  list(path: string): Promise<{ name: string; kind: 'file' | 'dir' }[]>;
  read(path: string, offset: number, length: number): Promise<Uint8Array>;
  write(path: string, offset: number, bytes: Uint8Array): Promise<void>;
  /**
   * The same at once, where the file can be read or written without waiting (it is open): the
   * bytes read into `into` (its length is the most wanted), or null when it would have to wait.
   */
  readNow?(path: string, offset: number, into: Uint8Array): number | null;
  /** True once written, false when it would have to wait. */
  writeNow?(path: string, offset: number, bytes: Uint8Array): boolean;
  truncate(path: string, size: number): Promise<void>;
  /** Creates an empty file; EEXIST when something is there. */
  createFile(path: string): Promise<void>;
  /** EEXIST when something is there. */
  mkdir(path: string): Promise<void>;
  /** A file, or an empty folder (ENOTEMPTY otherwise). */
  remove(path: string): Promise<void>;
  /** Replaces a file at `to`, or an empty folder when `from` is one. */
  rename(from: string, to: string): Promise<void>;
  /** The file's bytes reach storage. */
  flush(path: string): Promise<void>;
  /** Whatever the server no longer uses (open handles) can be let go: `path` or everything. */
  release(path?: string): Promise<void>;
  space(): Promise<{ total: number; free: number }>;
  /** Permission bits the guest set, by path (only those that differ from the defaults). */
  readModes(): Promise<Record<string, number>>;
  writeModes(modes: Record<string, number>): Promise<void>;
}

/** In the stack's system space (.os/): the permission bits the guest set, by path. */
export const MODES_FILE = 'workspace-modes.json';

/** Names the guest never sees nor makes: the stack's system space, and writes in progress. */
export function isHidden(dir: string, name: string): boolean {
  return (dir === '' && name === '.os') || isPartialWrite(name);
}

export const NAME_MAX = 255;const encoder = new TextEncoder();

export const join = (dir: string, name: string) => (dir ? `${dir}/${name}` : name);
export const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/** A name the guest may use in `dir`: one component, not hidden, not too long. */
export function checkName(dir: string, name: string): string {
  if (!name || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) throw new FsError(EINVAL, `"${name}" is not a name`);
  if (encoder.encode(name).byteLength > NAME_MAX) throw new FsError(ENAMETOOLONG, 'a name over 255 bytes');
  if (isHidden(dir, name)) throw new FsError(EACCES, `"${name}" is reserved for the stack`);
  return join(dir, name);
}

/** A /workspace with nothing in it that takes nothing (a machine given no folder: tests, tools). */
export function emptyWorkspaceFs(): WorkspaceFs {
  const refuse = async (): Promise<never> => {
    throw new FsError(EROFS, '/workspace is not connected to any folder');
  };
  return {
    stat: async (path) => (path === '' ? { kind: 'dir', size: 0, mtimeMs: 0 } : null),
    list: async () => [],
    read: refuse,
    write: refuse,
    truncate: refuse,
    createFile: refuse,
    mkdir: refuse,
    remove: refuse,
    rename: refuse,
    flush: async () => {},
    release: async () => {},
    space: async () => ({ total: 0, free: 0 }),
    readModes: async () => ({}),
    writeModes: refuse,
  };
}
