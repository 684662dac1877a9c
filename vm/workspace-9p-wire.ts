// 9P2000.L on the wire: the request types, a request's fields read in order, a reply built
// header first, and a path's stable inode number (its qid).
import { EINVAL, EPROTO, FsError } from './workspace-fs.ts';

const QTDIR = 0x80;
const QTFILE = 0;

/** Request types (the reply is type + 1). */
export const T = {
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
export const RLERROR = 7;

export const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads a request's fields in order. */
export class Reader {
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
export class Writer {
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
