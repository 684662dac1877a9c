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

import { EBADF, EBUSY, EEXIST, EINVAL, EIO, EISDIR, ENOENT, ENOTDIR, EOPNOTSUPP, EPERM, EPROTO, checkName, FsError, join, NAME_MAX, parentOf, type FsStat, type WorkspaceFs } from './workspace-fs.ts';
import { encoder, Reader, RLERROR, T, Writer } from './workspace-9p-wire.ts';
import { MAX_MSIZE, MIN_MSIZE, snapshotProblem, type Workspace9pSnapshot } from './workspace-9p-snapshot.ts';
// The server's snapshot, named with it for the image build (vm-images/lib/prestate.ts).
export type { Workspace9pSnapshot } from './workspace-9p-snapshot.ts';

const VERSION = '9P2000.L';
/** Bytes of a read or write message that are not data (P9_IOHDRSZ). */
const IO_HEADER = 24;
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

type Fid = { path: string; listing?: { name: string; kind: 'file' | 'dir' }[] };

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
      case T.version: case T.attach: case T.auth: case T.xattrwalk: case T.xattrcreate: case T.flush: case T.walk: case T.clunk:
        return this.session(type, r, w);
      case T.getattr: case T.setattr: case T.statfs:
        return this.attributes(type, r, w);
      case T.lopen: case T.lcreate: case T.mkdir: case T.read: case T.write: case T.readdir: case T.fsync:
        return this.files(type, r, w);
      case T.rename: case T.renameat: case T.unlinkat: case T.remove:
        return this.names(type, r, w);
      case T.lock: case T.getlock: case T.readlink: case T.symlink: case T.mknod: case T.link:
        return this.locksAndRefusals(type, r, w);
      default:
        throw new FsError(EOPNOTSUPP, `request ${type} is not supported`);
    }
  }

  /** The session: version, attach, walk, clunk, flush (and what is refused of auth and xattrs). */
  private async session(type: number, r: Reader, w: Writer): Promise<Uint8Array> {
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
      default:
        throw new FsError(EOPNOTSUPP, `request ${type} is not supported`);
    }
  }

  /** A file's attributes and the storage's: getattr, setattr, statfs. */
  private async attributes(type: number, r: Reader, w: Writer): Promise<Uint8Array> {
    switch (type) {
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
      default:
        throw new FsError(EOPNOTSUPP, `request ${type} is not supported`);
    }
  }

  /** Files and folders opened, made, read and written: lopen, lcreate, mkdir, read, write, readdir, fsync. */
  private async files(type: number, r: Reader, w: Writer): Promise<Uint8Array> {
    switch (type) {
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
      default:
        throw new FsError(EOPNOTSUPP, `request ${type} is not supported`);
    }
  }

  /** Names moved and removed: rename, renameat, unlinkat, remove. */
  private async names(type: number, r: Reader, w: Writer): Promise<Uint8Array> {
    switch (type) {
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
      default:
        throw new FsError(EOPNOTSUPP, `request ${type} is not supported`);
    }
  }

  /** Locks (granted: one guest) and what /workspace does not keep: links, device nodes. */
  private async locksAndRefusals(type: number, r: Reader, w: Writer): Promise<Uint8Array> {
    switch (type) {
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

