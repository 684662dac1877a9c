// /workspace: a 9P2000.L server (v86's `handle9p` hook) that serves the guest straight from the
// stack's folder (OPFS in the browser, a directory in Node). The files are never copied into the
// emulator: they cost no tab memory and no room in a saved state, and the stack worker's own
// writes are what the guest reads next (it mounts with cache=none).
//
// - Fids are paths. The guest keeps its fids across a suspend: `snapshot()` is taken with every
//   saved state (the machine's `saving` hook writes it beside the state as the journal) and a wake
//   `resume()`s it, trusted only for its own generation. Requests that arrive before then wait.
// - Requests are served one at a time, in order (the storage answers in order anyway).
// - Permission bits live beside the files (`modes`); owner, times the guest sets, symlinks, hard
//   links and device nodes are not kept: chown and utimes are accepted and have no effect, the
//   others are refused (EPERM), as on a FAT drive.
// Protocol: https://github.com/chaos/diod/blob/master/protocol.md (9P2000.L).

import { isPartialWrite } from './opfs-write.ts';

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

/** What a saved state's guest holds of the server: its fids (by path) and the message size. */
export interface Workspace9pSnapshot {
  generation: string | null;
  msize: number;
  fids: [number, string][];
}

const VERSION = '9P2000.L';
/** Largest message accepted (rc.sysinit mounts with msize=512000). */
export const MAX_MSIZE = 512 * 1024;
const MIN_MSIZE = 4096;
/** More fids than a guest holds by far (a few hundred at most): a snapshot with more is not one of ours. */
const MAX_SNAPSHOT_FIDS = 65_536;
/** Bytes of a read or write message that are not data (P9_IOHDRSZ). */
const IO_HEADER = 24;
const QTDIR = 0x80;
const QTFILE = 0;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const DIR_MODE = 0o755;
const FILE_MODE = 0o644;
const DT_DIR = 4;
const DT_REG = 8;
const O_TRUNC = 0o1000;
const O_EXCL = 0o200;
const AT_REMOVEDIR = 0x200;
const SETATTR_MODE = 0x1;
const SETATTR_SIZE = 0x8;
const GETATTR_BASIC = 0x7ff;
const V9FS_MAGIC = 0x01021997;
const BLOCK = 4096;
const NAME_MAX = 255;
/** In the stack's system space (.os/): the permission bits the guest set, by path. */
export const MODES_FILE = 'workspace-modes.json';

/** Names the guest never sees nor makes: the stack's system space, and writes in progress. */
export function isHidden(dir: string, name: string): boolean {
  return (dir === '' && name === '.os') || isPartialWrite(name);
}

/**
 * Why `value` cannot be a snapshot this server made, or null. It comes from the stack's folder,
 * which a stack file fills: every fid must name a path inside /workspace the guest could have
 * walked to (never the system space `.os/`, never `..`), and msize must be one this server
 * agrees to.
 */
export function snapshotProblem(value: unknown): string | null {
  const v = value as Partial<Workspace9pSnapshot> | null;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'it is not an object';
  if (v.generation !== null && (typeof v.generation !== 'string' || v.generation.length > 200)) return 'its generation is not one';
  if (!Number.isInteger(v.msize) || v.msize! < MIN_MSIZE || v.msize! > MAX_MSIZE) return `its message size ${String(v.msize)} is not between ${MIN_MSIZE} and ${MAX_MSIZE}`;
  if (!Array.isArray(v.fids)) return 'it has no list of fids';
  if (v.fids.length > MAX_SNAPSHOT_FIDS) return `it holds ${v.fids.length} fids (at most ${MAX_SNAPSHOT_FIDS})`;
  const seen = new Set<number>();
  for (const entry of v.fids as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2) return 'a fid is not [number, path]';
    const [fid, path] = entry as [unknown, unknown];
    if (!Number.isInteger(fid) || (fid as number) < 0 || (fid as number) > 0xffffffff) return `fid ${String(fid)} is not a 32-bit number`;
    if (seen.has(fid as number)) return `fid ${String(fid)} is listed twice`;
    seen.add(fid as number);
    if (typeof path !== 'string') return `fid ${String(fid)} has no path`;
    if (path === '') continue;
    let dir = '';
    for (const name of path.split('/')) {
      try {
        dir = checkName(dir, name);
      } catch (error) {
        return `fid ${String(fid)} names "${path.slice(0, 100)}", outside what the guest may see of /workspace (${(error as Error).message})`;
      }
    }
  }
  return null;
}

type Fid = { path: string; listing?: { name: string; kind: 'file' | 'dir' }[] };

/** Request types (the reply is type + 1). */
const T = {
  statfs: 8,
  lopen: 12,
  lcreate: 14,
  symlink: 16,
  mknod: 18,
  rename: 20,
  readlink: 22,
  getattr: 24,
  setattr: 26,
  xattrwalk: 30,
  xattrcreate: 32,
  readdir: 40,
  fsync: 50,
  lock: 52,
  getlock: 54,
  link: 70,
  mkdir: 72,
  renameat: 74,
  unlinkat: 76,
  version: 100,
  auth: 102,
  attach: 104,
  flush: 108,
  walk: 110,
  read: 116,
  write: 118,
  clunk: 120,
  remove: 122,
} as const;
const RLERROR = 7;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads a request's fields in order. */
class Reader {
  private at = 7;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number) {
    if (this.at + n > this.bytes.byteLength) throw new FsError(EPROTO, 'a 9p request ended early');
  }
  u8() {
    this.need(1);
    return this.view.getUint8(this.at++);
  }
  u16() {
    this.need(2);
    const v = this.view.getUint16(this.at, true);
    this.at += 2;
    return v;
  }
  u32() {
    this.need(4);
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }
  u64() {
    this.need(8);
    const v = this.view.getBigUint64(this.at, true);
    this.at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new FsError(EINVAL, 'an offset or size beyond 2^53');
    return Number(v);
  }
  str() {
    const n = this.u16();
    this.need(n);
    const s = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    try {
      return decoder.decode(s);
    } catch {
      throw new FsError(EINVAL, 'a name that is not UTF-8');
    }
  }
  bytesOf(n: number) {
    this.need(n);
    const s = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return s;
  }
}

/** Builds a reply: header first (its size written at the end). */
class Writer {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  private at = 7;
  constructor(
    private readonly type: number,
    readonly tag: number,
  ) {}
  private room(n: number) {
    if (this.at + n <= this.buf.byteLength) return;
    const next = new Uint8Array(Math.max(this.buf.byteLength * 2, this.at + n));
    next.set(this.buf);
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number) {
    this.room(1);
    this.view.setUint8(this.at++, v);
    return this;
  }
  u16(v: number) {
    this.room(2);
    this.view.setUint16(this.at, v, true);
    this.at += 2;
    return this;
  }
  u32(v: number) {
    this.room(4);
    this.view.setUint32(this.at, v >>> 0, true);
    this.at += 4;
    return this;
  }
  u64(v: number | bigint) {
    this.room(8);
    this.view.setBigUint64(this.at, BigInt(v), true);
    this.at += 8;
    return this;
  }
  str(s: string) {
    const b = encoder.encode(s);
    this.u16(b.byteLength);
    return this.bytes(b);
  }
  bytes(b: Uint8Array) {
    this.room(b.byteLength);
    this.buf.set(b, this.at);
    this.at += b.byteLength;
    return this;
  }
  qid(kind: 'file' | 'dir', path: string) {
    return this.u8(kind === 'dir' ? QTDIR : QTFILE)
      .u32(0)
      .u64(qidPath(path));
  }
  get length() {
    return this.at;
  }
  done(): Uint8Array {
    this.view.setUint32(0, this.at, true);
    this.view.setUint8(4, this.type);
    this.view.setUint16(5, this.tag, true);
    return this.buf.slice(0, this.at);
  }
}

/** A stable inode number for a path (FNV-1a, 64 bits); /workspace itself is 1. */
function qidPath(path: string): bigint {
  if (path === '') return 1n;
  let hash = 0xcbf29ce484222325n;
  for (const byte of encoder.encode(path)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash < 2n ? hash + 2n : hash;
}

const join = (dir: string, name: string) => (dir ? `${dir}/${name}` : name);
const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf('/')));

/** A name the guest may use in `dir`: one component, not hidden, not too long. */
function checkName(dir: string, name: string): string {
  if (!name || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) throw new FsError(EINVAL, `"${name}" is not a name`);
  if (encoder.encode(name).byteLength > NAME_MAX) throw new FsError(ENAMETOOLONG, 'a name over 255 bytes');
  if (isHidden(dir, name)) throw new FsError(EACCES, `"${name}" is reserved for the stack`);
  return join(dir, name);
}

export class Workspace9p {
  private fids = new Map<number, Fid>();
  private msize = 8192;
  private modes = new Map<string, number>();
  private modesLoaded: Promise<void> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private idle: (() => void)[] = [];
  /** Requests wait for this before they are served (a wake's fids first). */
  private gate: Promise<void>;
  private gateOpen: boolean;
  private openGate: () => void = () => {};
  private space: { at: number; value: Promise<{ total: number; free: number }> } | null = null;
  /** Directories have no times of their own in OPFS: the time this server first saw each. */
  private dirTimes = new Map<string, number>();
  private readonly started = Date.now();
  private scratch: Uint8Array | null = null;

  /** `waitForResume`: a wake's server holds requests until `resume()` (or `startFresh()`). */
  constructor(
    private readonly fs: WorkspaceFs,
    waitForResume = false,
  ) {
    this.gateOpen = !waitForResume;
    this.gate = waitForResume ? new Promise((resolve) => (this.openGate = resolve)) : Promise.resolve();
  }

  /**
   * v86's `filesystem.handle9p`. An answer's bytes are valid only while `reply` runs (v86 copies
   * them into the guest's memory at once): a read's answer is made in a buffer used again.
   */
  readonly handle = (request: Uint8Array, reply: (bytes: Uint8Array) => void): void => {
    // Reads and writes of an open file are answered at once, before the guest runs on: an answer
    // that waits for the emulator's next slice costs a guest that computes between its reads
    // (sha256sum, 32 KiB at a time) several ms each.
    if (this.inFlight === 0 && this.gateOpen) {
      const answer = this.serveNow(request);
      if (answer) {
        reply(answer);
        return;
      }
    }
    const copy = request.slice();
    this.inFlight++;
    this.chain = this.chain
      .then(() => this.gate)
      .then(() => this.serve(copy))
      .then(reply, (error: unknown) => console.error('9p: a reply could not be sent', error))
      .finally(() => {
        if (--this.inFlight === 0) for (const done of this.idle.splice(0)) done();
      });
  };

  /** The guest's fids as they are now: kept beside a saved state, given back to `resume`. */
  snapshot(generation: string | null): Workspace9pSnapshot {
    return { generation, msize: this.msize, fids: [...this.fids].map(([fid, { path }]) => [fid, path]) };
  }

  /**
   * A woken guest's fids, when `snapshot` is of the state it woke from and one this server could
   * have made (snapshotProblem); then requests are served.
   */
  resume(snapshot: Workspace9pSnapshot | null, generation: string | null): boolean {
    const problem = snapshot === null ? null : snapshotProblem(snapshot);
    if (problem) console.warn(`/workspace: the share's journal is not taken (${problem})`);
    const trusted = snapshot !== null && problem === null && generation !== null && snapshot.generation === generation;
    if (trusted) {
      this.msize = snapshot.msize;
      this.fids = new Map(snapshot.fids.map(([fid, path]) => [fid, { path }]));
    }
    this.gateOpen = true;
    this.openGate();
    return trusted;
  }

  /** Resolves once no request is being served (before a state is saved: none may be in flight). */
  async drain(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.fs.release();
  }

  /** The stack worker changed `path`: nothing held of it may be stale. */
  async changed(path: string): Promise<void> {
    await this.fs.release(path);
  }

  /** Lets go of every open file (the emulator is gone). */
  async release(): Promise<void> {
    await this.fs.release();
  }

  /**
   * The buffer a read's answer is made in: one, reused (v86 copies an answer into the guest's
   * memory as it is given), so reading a large file makes no garbage.
   */
  private readReply(count: number): Uint8Array {
    const size = 11 + Math.min(count, this.msize - 11);
    if (!this.scratch || this.scratch.byteLength < size) this.scratch = new Uint8Array(Math.max(size, this.msize));
    return this.scratch.subarray(0, size);
  }

  private readDone(answer: Uint8Array, tag: number, n: number): Uint8Array {
    const out = new DataView(answer.buffer, answer.byteOffset);
    out.setUint32(0, 11 + n, true);
    out.setUint8(4, T.read + 1);
    out.setUint16(5, tag, true);
    out.setUint32(7, n, true);
    return answer.subarray(0, 11 + n);
  }

  /** A read or write answered without waiting, or null (then it is served in turn). */
  private serveNow(request: Uint8Array): Uint8Array | null {
    const type = request[4];
    if ((type !== T.read && type !== T.write) || request.byteLength < 23) return null;
    const view = new DataView(request.buffer, request.byteOffset, request.byteLength);
    const tag = view.getUint16(5, true);
    const fid = this.fids.get(view.getUint32(7, true));
    const offset = Number(view.getBigUint64(11, true));
    const count = view.getUint32(19, true);
    if (!fid || offset > Number.MAX_SAFE_INTEGER) return null;
    try {
      if (type === T.read) {
        if (!this.fs.readNow) return null;
        const answer = this.readReply(count);
        const n = this.fs.readNow(fid.path, offset, answer.subarray(11));
        if (n === null) return null;
        return this.readDone(answer, tag, n);
      }
      if (!this.fs.writeNow || 23 + count > request.byteLength) return null;
      if (!this.fs.writeNow(fid.path, offset, request.subarray(23, 23 + count))) return null;
      return new Writer(T.write + 1, tag).u32(count).done();
    } catch (error) {
      const errno = error instanceof FsError ? error.errno : EIO;
      if (!(error instanceof FsError)) console.warn(`9p: request ${type} failed`, error);
      return new Writer(RLERROR, tag).u32(errno).done();
    }
  }

  private async serve(request: Uint8Array): Promise<Uint8Array> {
    const type = request[4] ?? 0;
    const tag = request.byteLength >= 7 ? request[5]! | (request[6]! << 8) : 0xffff;
    try {
      if (request.byteLength < 7) throw new FsError(EPROTO, 'a 9p request shorter than its header');
      return await this.dispatch(type, new Reader(request), new Writer(type + 1, tag));
    } catch (error) {
      const errno = error instanceof FsError ? error.errno : EIO;
      if (!(error instanceof FsError)) console.warn(`9p: request ${type} failed`, error);
      return new Writer(RLERROR, tag).u32(errno).done();
    }
  }

  private fid(id: number): Fid {
    const fid = this.fids.get(id);
    if (!fid) throw new FsError(EBADF, `no fid ${id}`);
    return fid;
  }

  private async statOf(path: string): Promise<FsStat> {
    const stat = await this.fs.stat(path);
    if (!stat) throw new FsError(ENOENT, `"${path}" is not there`);
    return stat;
  }

  private async loadModes(): Promise<void> {
    this.modesLoaded ??= this.fs.readModes().then(
      (modes) => {
        for (const [path, mode] of Object.entries(modes)) if (Number.isInteger(mode)) this.modes.set(path, mode & 0o7777);
      },
      (error: unknown) => console.warn('9p: the permission bits could not be read; the defaults stand', error),
    );
    await this.modesLoaded;
  }

  private async saveModes(): Promise<void> {
    await this.fs.writeModes(Object.fromEntries(this.modes));
  }

  private modeOf(path: string, kind: 'file' | 'dir'): number {
    return (kind === 'dir' ? S_IFDIR : S_IFREG) | (this.modes.get(path) ?? (kind === 'dir' ? DIR_MODE : FILE_MODE));
  }

  /** Moves what is kept by path (fids, modes) from `from` to `to`, folders' contents included. */
  private moved(from: string, to: string): void {
    const rebase = (path: string) => (path === from ? to : path.startsWith(`${from}/`) ? to + path.slice(from.length) : null);
    for (const fid of this.fids.values()) {
      const next = rebase(fid.path);
      if (next !== null) fid.path = next;
    }
    for (const [path, mode] of [...this.modes]) {
      const next = rebase(path);
      if (next === null) continue;
      this.modes.delete(path);
      this.modes.set(next, mode);
    }
  }

  private async dispatch(type: number, r: Reader, w: Writer): Promise<Uint8Array> {
    switch (type) {
      case T.version: {
        const msize = r.u32();
        const version = r.str();
        this.msize = Math.max(MIN_MSIZE, Math.min(msize, MAX_MSIZE));
        this.fids.clear();
        return w
          .u32(this.msize)
          .str(version === VERSION ? VERSION : 'unknown')
          .done();
      }
      case T.attach: {
        const fid = r.u32();
        this.fids.set(fid, { path: '' });
        await this.loadModes();
        return w.qid('dir', '').done();
      }
      case T.auth:
      case T.xattrwalk:
      case T.xattrcreate:
        throw new FsError(EOPNOTSUPP, 'not supported');
      case T.flush:
        return w.done(); // served in order: the request it names has been answered already
      case T.walk: {
        const from = this.fid(r.u32());
        const newfid = r.u32();
        const names = Array.from({ length: r.u16() }, () => r.str());
        let path = from.path;
        const qids: { kind: 'file' | 'dir'; path: string }[] = [];
        for (const name of names) {
          let next: string;
          if (name === '..') next = parentOf(path);
          else if (name === '.') next = path;
          else {
            try {
              next = checkName(path, name);
            } catch {
              break; // names the guest cannot have are not there
            }
          }
          const stat = await this.fs.stat(next);
          if (!stat) break;
          qids.push({ kind: stat.kind, path: next });
          path = next;
          if (stat.kind !== 'dir') break; // a file has no children
        }
        if (names.length > 0 && qids.length === 0) throw new FsError(ENOENT, `"${names[0]}" is not there`);
        if (qids.length === names.length) this.fids.set(newfid, { path });
        w.u16(qids.length);
        for (const q of qids) w.qid(q.kind, q.path);
        return w.done();
      }
      case T.clunk: {
        const id = r.u32();
        const fid = this.fid(id);
        this.fids.delete(id);
        if (![...this.fids.values()].some((other) => other.path === fid.path)) await this.fs.release(fid.path);
        return w.done();
      }
      case T.getattr: {
        const fid = this.fid(r.u32());
        const stat = await this.statOf(fid.path);
        const mtime = stat.kind === 'dir' ? this.dirTime(fid.path) : stat.mtimeMs;
        const sec = Math.floor(mtime / 1000);
        const nsec = Math.floor((mtime % 1000) * 1e6);
        w.u64(GETATTR_BASIC)
          .qid(stat.kind, fid.path)
          .u32(this.modeOf(fid.path, stat.kind))
          .u32(0)
          .u32(0)
          .u64(stat.kind === 'dir' ? 2 : 1)
          .u64(0)
          .u64(stat.size)
          .u64(BLOCK)
          .u64(Math.ceil(stat.size / 512));
        for (let i = 0; i < 4; i++) w.u64(sec).u64(nsec); // atime, mtime, ctime, btime
        return w.u64(0).u64(0).done();
      }
      case T.setattr: {
        const fid = this.fid(r.u32());
        const valid = r.u32();
        const mode = r.u32();
        r.u32(); // uid
        r.u32(); // gid
        const size = r.u64();
        const stat = await this.statOf(fid.path);
        if (valid & SETATTR_SIZE) {
          if (stat.kind === 'dir') throw new FsError(EISDIR, 'a folder has no size to set');
          await this.fs.truncate(fid.path, size);
        }
        if (valid & SETATTR_MODE) {
          const bits = mode & 0o7777;
          if (bits === (stat.kind === 'dir' ? DIR_MODE : FILE_MODE)) this.modes.delete(fid.path);
          else this.modes.set(fid.path, bits);
          await this.saveModes();
        }
        return w.done(); // owner and times: accepted, not kept
      }
      case T.statfs: {
        this.fid(r.u32());
        const { total, free } = await this.spaceNow();
        return w
          .u32(V9FS_MAGIC)
          .u32(BLOCK)
          .u64(Math.floor(total / BLOCK))
          .u64(Math.floor(free / BLOCK))
          .u64(Math.floor(free / BLOCK))
          .u64(0)
          .u64(0)
          .u64(0)
          .u32(NAME_MAX)
          .done();
      }
      case T.lopen: {
        const fid = this.fid(r.u32());
        const flags = r.u32();
        fid.listing = undefined;
        const stat = await this.statOf(fid.path);
        if (stat.kind === 'file' && flags & O_TRUNC) await this.fs.truncate(fid.path, 0);
        return w.qid(stat.kind, fid.path).u32(this.msize - IO_HEADER).done();
      }
      case T.lcreate: {
        const fid = this.fid(r.u32());
        const name = r.str();
        const flags = r.u32();
        const mode = r.u32();
        r.u32(); // gid
        const path = checkName(fid.path, name);
        const there = await this.fs.stat(path);
        if (there && (flags & O_EXCL || there.kind === 'dir')) throw new FsError(there.kind === 'dir' ? EISDIR : EEXIST, `"${name}" is there already`);
        if (!there) await this.fs.createFile(path);
        else if (flags & O_TRUNC) await this.fs.truncate(path, 0);
        if (!there) await this.setMode(path, 'file', mode);
        fid.path = path;
        return w.qid('file', path).u32(this.msize - IO_HEADER).done();
      }
      case T.mkdir: {
        const dir = this.fid(r.u32());
        const path = checkName(dir.path, r.str());
        const mode = r.u32();
        await this.fs.mkdir(path);
        this.dirTimes.set(path, Date.now());
        await this.setMode(path, 'dir', mode);
        return w.qid('dir', path).done();
      }
      case T.read: {
        const fid = this.fid(r.u32());
        const offset = r.u64();
        const count = r.u32();
        const bytes = await this.fs.read(fid.path, offset, Math.min(count, this.msize - 11));
        const answer = this.readReply(count);
        answer.set(bytes, 11);
        return this.readDone(answer, w.tag, bytes.byteLength);
      }
      case T.write: {
        const fid = this.fid(r.u32());
        const offset = r.u64();
        const data = r.bytesOf(r.u32());
        await this.fs.write(fid.path, offset, data);
        return w.u32(data.byteLength).done();
      }
      case T.readdir: {
        const fid = this.fid(r.u32());
        const offset = r.u64();
        const count = r.u32();
        // The listing is taken when a read begins and kept until it ends: cookies stay meaningful.
        if (offset === 0 || !fid.listing) fid.listing = [{ name: '.', kind: 'dir' }, { name: '..', kind: 'dir' }, ...(await this.fs.list(fid.path))];
        const at = w.length;
        w.u32(0);
        let used = 0;
        for (let i = offset; i < fid.listing.length; i++) {
          const entry = fid.listing[i]!;
          const path = entry.name === '.' ? fid.path : entry.name === '..' ? parentOf(fid.path) : join(fid.path, entry.name);
          const size = 13 + 8 + 1 + 2 + encoder.encode(entry.name).byteLength;
          if (used + size > count) break;
          w.qid(entry.kind, path)
            .u64(i + 1)
            .u8(entry.kind === 'dir' ? DT_DIR : DT_REG)
            .str(entry.name);
          used += size;
        }
        const reply = w.done();
        new DataView(reply.buffer).setUint32(at, used, true);
        return reply;
      }
      case T.fsync: {
        const fid = this.fid(r.u32());
        if ((await this.statOf(fid.path)).kind === 'file') await this.fs.flush(fid.path);
        return w.done();
      }
      case T.rename: {
        const fid = this.fid(r.u32());
        const dir = this.fid(r.u32());
        await this.renameTo(fid.path, checkName(dir.path, r.str()));
        return w.done();
      }
      case T.renameat: {
        const from = checkName(this.fid(r.u32()).path, r.str());
        const to = checkName(this.fid(r.u32()).path, r.str());
        await this.renameTo(from, to);
        return w.done();
      }
      case T.unlinkat: {
        const dir = this.fid(r.u32());
        const path = checkName(dir.path, r.str());
        const flags = r.u32();
        const stat = await this.statOf(path);
        if (stat.kind === 'dir' && !(flags & AT_REMOVEDIR)) throw new FsError(EISDIR, `"${path}" is a folder`);
        if (stat.kind === 'file' && flags & AT_REMOVEDIR) throw new FsError(ENOTDIR, `"${path}" is not a folder`);
        await this.removePath(path);
        return w.done();
      }
      case T.remove: {
        const id = r.u32();
        const fid = this.fid(id);
        this.fids.delete(id);
        if (fid.path === '') throw new FsError(EBUSY, '/workspace itself cannot be removed');
        await this.removePath(fid.path);
        return w.done();
      }
      case T.lock: {
        this.fid(r.u32());
        return w.u8(0).done(); // granted: one guest, its own kernel keeps the locks between its processes
      }
      case T.getlock: {
        this.fid(r.u32());
        r.u8();
        const start = r.u64();
        const length = r.u64();
        const proc = r.u32();
        const client = r.str();
        return w.u8(2).u64(start).u64(length).u32(proc).str(client).done(); // unlocked
      }
      case T.readlink:
        this.fid(r.u32());
        throw new FsError(EINVAL, 'no symbolic links here');
      case T.symlink:
      case T.mknod:
      case T.link:
        throw new FsError(EPERM, '/workspace keeps plain files and folders only');
      default:
        throw new FsError(EOPNOTSUPP, `request ${type} is not supported`);
    }
  }

  private async setMode(path: string, kind: 'file' | 'dir', mode: number): Promise<void> {
    const bits = mode & 0o7777;
    if (bits === (kind === 'dir' ? DIR_MODE : FILE_MODE) && !this.modes.has(path)) return;
    this.modes.set(path, bits);
    await this.saveModes();
  }

  private async renameTo(from: string, to: string): Promise<void> {
    if (from === '') throw new FsError(EINVAL, '/workspace itself cannot move');
    if (to === from) return;
    if (to.startsWith(`${from}/`)) throw new FsError(EINVAL, 'a folder cannot move into itself');
    await this.fs.rename(from, to);
    this.moved(from, to);
    if (this.modes.size) await this.saveModes();
  }

  private async removePath(path: string): Promise<void> {
    await this.fs.remove(path);
    let changed = false;
    for (const key of [...this.modes.keys()]) {
      if (key === path || key.startsWith(`${path}/`)) changed = this.modes.delete(key) || changed;
    }
    if (changed) await this.saveModes();
  }

  private dirTime(path: string): number {
    return this.dirTimes.get(path) ?? this.started;
  }

  private spaceNow(): Promise<{ total: number; free: number }> {
    const now = Date.now();
    if (!this.space || now - this.space.at > 5000) this.space = { at: now, value: this.fs.space() };
    return this.space.value;
  }
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
