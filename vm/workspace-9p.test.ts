// The /workspace 9p server over a real folder, spoken to as the guest's kernel does (9P2000.L
// messages built here byte by byte).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeWorkspaceFs } from './node-workspace-fs.ts';
import { Workspace9p } from './workspace-9p.ts';
import { MAX_MSIZE, snapshotProblem } from './workspace-9p-snapshot.ts';
import { EACCES, EBADF, EEXIST, EISDIR, ENOENT, ENOTEMPTY, EPERM, EPROTO } from './workspace-fs.ts';

const enc = new TextEncoder();

/** A request: type, tag and fields ('u8'|'u16'|'u32'|'u64'|'s'|'b' each with its value). */
function message(type: number, tag: number, fields: [string, number | string | Uint8Array][]): Uint8Array {
  const parts: number[] = [0, 0, 0, 0, type, tag & 0xff, tag >> 8];
  const push = (n: number, bytes: number) => {
    let v = BigInt(n);
    for (let i = 0; i < bytes; i++) {
      parts.push(Number(v & 0xffn));
      v >>= 8n;
    }
  };
  for (const [kind, value] of fields) {
    if (kind === 's') {
      const b = enc.encode(value as string);
      push(b.length, 2);
      parts.push(...b);
    } else if (kind === 'b') parts.push(...(value as Uint8Array));
    else push(value as number, { u8: 1, u16: 2, u32: 4, u64: 8 }[kind]!);
  }
  const out = new Uint8Array(parts);
  new DataView(out.buffer).setUint32(0, out.length, true);
  return out;
}

class Reply {
  at = 7;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get type() {
    return this.bytes[4];
  }
  get tag() {
    return this.view.getUint16(5, true);
  }
  u8() {
    return this.view.getUint8(this.at++);
  }
  u16() {
    const v = this.view.getUint16(this.at, true);
    this.at += 2;
    return v;
  }
  u32() {
    const v = this.view.getUint32(this.at, true);
    this.at += 4;
    return v;
  }
  u64() {
    const v = Number(this.view.getBigUint64(this.at, true));
    this.at += 8;
    return v;
  }
  str() {
    const n = this.u16();
    const s = new TextDecoder().decode(this.bytes.subarray(this.at, this.at + n));
    this.at += n;
    return s;
  }
  qid() {
    return { type: this.u8(), version: this.u32(), path: this.view.getBigUint64((this.at += 8) - 8, true) };
  }
}

let dir: string;
let server: Workspace9p;
let tag = 1;

function call(s: Workspace9p, type: number, fields: [string, number | string | Uint8Array][]): Promise<Reply> {
  const t = tag++;
  return new Promise((resolve) => s.handle(message(type, t, fields), (bytes) => resolve(new Reply(bytes))));
}

/** The errno of an Rlerror, or null for a success of the expected type. */
function errnoOf(reply: Reply, type: number): number | null {
  if (reply.type === 7) return reply.u32();
  expect(reply.type).toBe(type + 1);
  return null;
}

async function ok(s: Workspace9p, type: number, fields: [string, number | string | Uint8Array][]): Promise<Reply> {
  const reply = await call(s, type, fields);
  const errno = errnoOf(reply, type);
  if (errno !== null) throw new Error(`request ${type} failed with errno ${errno}`);
  return reply;
}

async function mount(s: Workspace9p): Promise<void> {
  const v = await ok(s, 100, [['u32', 512000], ['s', '9P2000.L']]);
  expect(v.u32()).toBe(512000);
  expect(v.str()).toBe('9P2000.L');
  await ok(s, 104, [['u32', 0], ['u32', 0xffffffff], ['s', 'root'], ['s', ''], ['u32', 0]]);
}

const walk = (s: Workspace9p, fid: number, newfid: number, names: string[]) => call(s, 110, [['u32', fid], ['u32', newfid], ['u16', names.length], ...names.map((n): [string, string] => ['s', n])]);
const lcreate = (s: Workspace9p, fid: number, name: string, mode = 0o644, flags = 0o102) => call(s, 14, [['u32', fid], ['s', name], ['u32', flags], ['u32', mode], ['u32', 0]]);
const write = (s: Workspace9p, fid: number, offset: number, data: Uint8Array) => ok(s, 118, [['u32', fid], ['u64', offset], ['u32', data.length], ['b', data]]);
const read = async (s: Workspace9p, fid: number, offset: number, count: number) => {
  const r = await ok(s, 116, [['u32', fid], ['u64', offset], ['u32', count]]);
  const n = r.u32();
  return r.bytes.slice(r.at, r.at + n);
};
const getattr = async (s: Workspace9p, fid: number) => {
  const r = await ok(s, 24, [['u32', fid], ['u64', 0x7ff]]);
  r.u64();
  const qid = r.qid();
  const mode = r.u32();
  r.u32();
  r.u32();
  r.u64();
  r.u64();
  return { qid, mode, size: r.u64() };
};
async function readdir(s: Workspace9p, fid: number): Promise<string[]> {
  await ok(s, 12, [['u32', fid], ['u32', 0o200000]]);
  const names: string[] = [];
  let offset = 0;
  for (;;) {
    const r = await ok(s, 40, [['u32', fid], ['u64', offset], ['u32', 64]]);
    const count = r.u32();
    if (count === 0) return names;
    const end = r.at + count;
    while (r.at < end) {
      r.qid();
      offset = r.u64();
      r.u8();
      names.push(r.str());
    }
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'workspace-9p-'));
  server = new Workspace9p(nodeWorkspaceFs(dir));
  await mount(server);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the /workspace 9p server', () => {
  it('creates, writes and reads a file that is in the folder at once', async () => {
    await ok(server, 110, [['u32', 0], ['u32', 1], ['u16', 0]]);
    await ok(server, 14, [['u32', 1], ['s', 'notes.txt'], ['u32', 0o102], ['u32', 0o644], ['u32', 0]]);
    await write(server, 1, 0, enc.encode('hello 9p'));
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('hello 9p');
    expect(new TextDecoder().decode(await read(server, 1, 6, 100))).toBe('9p');
    const attr = await getattr(server, 1);
    expect(attr.size).toBe(8);
    expect(attr.mode).toBe(0o100644);
    await ok(server, 120, [['u32', 1]]);
    expect(errnoOf(await call(server, 116, [['u32', 1], ['u64', 0], ['u32', 10]]), 116)).toBe(EBADF);
  });

  it('reads what the host wrote, and lists folders without the system space or partial writes', async () => {
    mkdirSync(join(dir, 'documents'));
    mkdirSync(join(dir, '.os'));
    writeFileSync(join(dir, 'documents', 'invoice.pdf'), 'PDF');
    writeFileSync(join(dir, '.stackdocs-partial-123'), 'half');
    expect(await readdir(server, 0)).toEqual(['.', '..', 'documents']);
    const w = await walk(server, 0, 2, ['documents', 'invoice.pdf']);
    expect(w.u16()).toBe(2);
    expect(new TextDecoder().decode(await read(server, 2, 0, 100))).toBe('PDF');
    // The system space is not there for the guest, and cannot be made.
    expect(errnoOf(await walk(server, 0, 3, ['.os']), 110)).toBe(ENOENT);
    await ok(server, 110, [['u32', 0], ['u32', 4], ['u16', 0]]);
    expect(errnoOf(await call(server, 72, [['u32', 4], ['s', '.os'], ['u32', 0o755], ['u32', 0]]), 72)).toBe(EACCES);
  });

  it('walks partway and stops at what is not there', async () => {
    mkdirSync(join(dir, 'a'));
    const partial = await walk(server, 0, 5, ['a', 'missing']);
    expect(partial.type).toBe(111);
    expect(partial.u16()).toBe(1);
    // newfid was not made
    expect(errnoOf(await call(server, 24, [['u32', 5], ['u64', 0x7ff]]), 24)).toBe(EBADF);
    expect(errnoOf(await walk(server, 0, 5, ['nothing']), 110)).toBe(ENOENT);
  });

  it('renames and removes as POSIX does, fids following a rename', async () => {
    await ok(server, 110, [['u32', 0], ['u32', 1], ['u16', 0]]);
    await ok(server, 72, [['u32', 1], ['s', 'src'], ['u32', 0o755], ['u32', 0]]);
    await ok(server, 110, [['u32', 0], ['u32', 2], ['u16', 1], ['s', 'src']]);
    expect((await lcreate(server, 2, 'a.txt')).type).toBe(15);
    await write(server, 2, 0, enc.encode('moved'));
    await ok(server, 74, [['u32', 0], ['s', 'src'], ['u32', 0], ['s', 'dst']]);
    expect(existsSync(join(dir, 'dst', 'a.txt'))).toBe(true);
    expect(new TextDecoder().decode(await read(server, 2, 0, 10))).toBe('moved'); // the open fid followed
    expect(errnoOf(await lcreate(server, 1, 'dst', 0o644, 0o302), 14)).toBe(EISDIR);
    expect(errnoOf(await call(server, 76, [['u32', 0], ['s', 'dst'], ['u32', 0x200]]), 76)).toBe(ENOTEMPTY);
    expect(errnoOf(await call(server, 76, [['u32', 0], ['s', 'dst'], ['u32', 0]]), 76)).toBe(EISDIR);
    await ok(server, 110, [['u32', 0], ['u32', 3], ['u16', 1], ['s', 'dst']]);
    await ok(server, 76, [['u32', 3], ['s', 'a.txt'], ['u32', 0]]);
    await ok(server, 76, [['u32', 0], ['s', 'dst'], ['u32', 0x200]]);
    expect(existsSync(join(dir, 'dst'))).toBe(false);
  });

  it('keeps permission bits beside the files, for the next server too', async () => {
    await ok(server, 110, [['u32', 0], ['u32', 1], ['u16', 0]]);
    await lcreate(server, 1, 'run.sh', 0o755);
    expect((await getattr(server, 1)).mode).toBe(0o100755);
    await ok(server, 26, [['u32', 1], ['u32', 1], ['u32', 0o700], ['u32', 0], ['u32', 0], ['u64', 0], ['u64', 0], ['u64', 0], ['u64', 0], ['u64', 0]]);
    const next = new Workspace9p(nodeWorkspaceFs(dir));
    await mount(next);
    await ok(next, 110, [['u32', 0], ['u32', 1], ['u16', 1], ['s', 'run.sh']]);
    expect((await getattr(next, 1)).mode).toBe(0o100700);
    expect(errnoOf(await lcreate(next, 0, 'run.sh', 0o644, 0o302), 14)).toBe(EEXIST);
    expect(errnoOf(await call(next, 16, [['u32', 0], ['s', 'link'], ['s', 'run.sh'], ['u32', 0]]), 16)).toBe(EPERM);
  });

  it('truncates by setattr and by an open with O_TRUNC', async () => {
    writeFileSync(join(dir, 'big.bin'), new Uint8Array(1000));
    await ok(server, 110, [['u32', 0], ['u32', 1], ['u16', 1], ['s', 'big.bin']]);
    await ok(server, 26, [['u32', 1], ['u32', 8], ['u32', 0], ['u32', 0], ['u32', 0], ['u64', 10], ['u64', 0], ['u64', 0], ['u64', 0], ['u64', 0]]);
    expect(readFileSync(join(dir, 'big.bin')).length).toBe(10);
    await ok(server, 12, [['u32', 1], ['u32', 0o1001]]);
    expect(readFileSync(join(dir, 'big.bin')).length).toBe(0);
  });

  it("gives a woken guest its fids back only from its own state's snapshot", async () => {
    mkdirSync(join(dir, 'kept'));
    await ok(server, 110, [['u32', 0], ['u32', 7], ['u16', 1], ['s', 'kept']]);
    const snapshot = server.snapshot('gen-1');
    expect(snapshot.fids).toEqual([
      [0, ''],
      [7, 'kept'],
    ]);
    // Its requests wait for the snapshot.
    const woken = new Workspace9p(nodeWorkspaceFs(dir), true);
    let answered = false;
    const pending = call(woken, 24, [['u32', 7], ['u64', 0x7ff]]).then((r) => ((answered = true), r));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    expect(woken.resume(snapshot, 'gen-1')).toBe(true);
    expect(errnoOf(await pending, 24)).toBe(null);
    // Another state's snapshot is not trusted.
    const other = new Workspace9p(nodeWorkspaceFs(dir), true);
    expect(other.resume(snapshot, 'gen-2')).toBe(false);
    expect(errnoOf(await call(other, 24, [['u32', 7], ['u64', 0x7ff]]), 24)).toBe(EBADF);
  });

  it('trusts no snapshot whose fids leave /workspace or name the system space, nor an unbounded msize', async () => {
    mkdirSync(join(dir, '.os', 'config'), { recursive: true });
    writeFileSync(join(dir, '.os', 'config', 'secrets.json'), '{"api_key":"sk-secret"}');
    const snapshot = (fids: [number, string][], msize = 8192) => ({ generation: 'gen-1', msize, fids });
    expect(snapshotProblem(snapshot([[0, ''], [3, 'documents/a.txt']]))).toBeNull();
    expect(snapshotProblem(snapshot([[0, ''], [9, '.os']]))).toBe('fid 9 names ".os", outside what the guest may see of /workspace (".os" is reserved for the stack)');
    expect(snapshotProblem(snapshot([[9, '.os/config/secrets.json']]))).toContain('fid 9 names ".os/config/secrets.json", outside what the guest may see');
    expect(snapshotProblem(snapshot([[9, 'documents/../../etc']]))).toContain('outside what the guest may see');
    expect(snapshotProblem(snapshot([[9, '/etc/passwd']]))).toContain('outside what the guest may see');
    expect(snapshotProblem(snapshot([[9, 'a//b']]))).toContain('outside what the guest may see');
    expect(snapshotProblem(snapshot([[0, ''], [0, 'x']]))).toBe('fid 0 is listed twice');
    expect(snapshotProblem(snapshot([[-1, 'x']]))).toBe('fid -1 is not a 32-bit number');
    expect(snapshotProblem(snapshot([], 1 << 30))).toBe(`its message size ${1 << 30} is not between 4096 and ${MAX_MSIZE}`);
    expect(snapshotProblem({ generation: 'g', msize: 8192, fids: Array.from({ length: 70_000 }, (_, i) => [i, '']) })).toContain('it holds 70000 fids');
    expect(snapshotProblem([1, 2])).toBe('it is not an object');
    // A woken guest given such a snapshot holds none of its fids: it cannot read the secrets.
    const woken = new Workspace9p(nodeWorkspaceFs(dir), true);
    const warn = console.warn;
    console.warn = () => {};
    try {
      expect(woken.resume(snapshot([[0, ''], [9, '.os/config/secrets.json']]), 'gen-1')).toBe(false);
    } finally {
      console.warn = warn;
    }
    expect(errnoOf(await call(woken, 24, [['u32', 9], ['u64', 0x7ff]]), 24)).toBe(EBADF);
  });

  it('answers a malformed request with an error and goes on', async () => {
    const r = await new Promise<Reply>((resolve) => server.handle(new Uint8Array([9, 0, 0, 0, 110, 5, 0, 1, 0]), (b) => resolve(new Reply(b))));
    expect(r.type).toBe(7);
    expect(r.tag).toBe(5);
    expect(r.u32()).toBe(EPROTO);
    expect((await getattr(server, 0)).mode).toBe(0o040755);
  });

  it('drains: resolves once every request in flight is answered', async () => {
    writeFileSync(join(dir, 'x'), 'x');
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) void walk(server, 0, 10 + i, ['x']).then(() => answers.push(i));
    await server.drain();
    expect(answers).toEqual([0, 1, 2, 3, 4]);
  });
});
