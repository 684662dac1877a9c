// The checkpoint store in real Chromium OPFS: a take restores byte for byte at its nested paths;
// a second take stores only the chunks that changed and never reads a file whose stamp (or a chunk
// `unchanged` says) still holds; the changes list added, removed and changed user files and flag
// the computer and the databases; pruning keeps the newest 20 and the newest of each of the last
// 7 days and removes only the packs nothing kept names; a torn take's pack and a corrupt record are
// swept or ignored on open; a missing pack or a damaged chunk is reported as damage; packs an
// earlier version deflated are still restored; bytes() is the folder's size.
import { deflateSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFLATED, STORED, ZSTD } from './codec.ts';
import { CHUNK_SIZE, CheckpointError, checkpointStore, digestState, type CheckpointSource, type TakeOptions } from './store.ts';

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };
const entries = (dir: FileSystemDirectoryHandle) => (dir as unknown as Entries).entries();
const DAY = 86_400_000;

let area = '';
let root: FileSystemDirectoryHandle;
let storeDir: FileSystemDirectoryHandle;

beforeEach(async () => {
  area = `checkpoints-test-${crypto.randomUUID().slice(0, 8)}`;
  root = await (await navigator.storage.getDirectory()).getDirectoryHandle(area, { create: true });
  storeDir = await root.getDirectoryHandle('store', { create: true });
});

afterEach(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

function random(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + 65_536)));
  return bytes;
}

/** A file whose chunks are random, zero, random, zero, then a random tail: more than 3 chunks. */
function bigFile(): Uint8Array {
  const bytes = new Uint8Array(4 * CHUNK_SIZE + 1234);
  bytes.set(random(CHUNK_SIZE), 0);
  bytes.set(random(CHUNK_SIZE), 2 * CHUNK_SIZE);
  bytes.set(random(1234), 4 * CHUNK_SIZE);
  return bytes;
}

/** A source over `bytes`; every read's offset is logged in `reads`. */
function source(path: string, bytes: Uint8Array, extra: Partial<CheckpointSource> = {}, reads: number[] = []): CheckpointSource {
  return {
    path,
    size: bytes.byteLength,
    read: async (at, length) => {
      reads.push(at);
      return bytes.slice(at, at + length);
    },
    ...extra,
  };
}

const never = (path: string, size: number, stamp: string): CheckpointSource => ({
  path,
  size,
  stamp,
  read: () => Promise.reject(new Error(`${path} was read`)),
});

function take(sources: CheckpointSource[], label = 'a mission'): TakeOptions {
  return {
    reason: 'mission',
    label,
    layout: null,
    sources,
    isUserFile: (path) => path.startsWith('workspace/'),
    isComputer: (path) => path.startsWith('.os/vm/'),
    isDatabase: (path) => /^\.os\/memory\/[^/]+\.db$/.test(path),
  };
}

/** Every file under `dir`, by its path. */
async function tree(dir: FileSystemDirectoryHandle, prefix = ''): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  for await (const [name, handle] of entries(dir)) {
    if (handle.kind === 'directory') for (const [path, bytes] of await tree(handle as FileSystemDirectoryHandle, `${prefix}${name}/`)) found.set(path, bytes);
    else found.set(`${prefix}${name}`, new Uint8Array(await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer()));
  }
  return found;
}

async function names(dir: FileSystemDirectoryHandle): Promise<string[]> {
  const found: string[] = [];
  for await (const [name] of entries(dir)) found.push(name);
  return found.sort();
}

const packs = () => storeDir.getDirectoryHandle('packs', { create: true });

async function restored(store: ReturnType<typeof checkpointStore>, id: string): Promise<Map<string, Uint8Array>> {
  const into = await root.getDirectoryHandle(`out-${crypto.randomUUID().slice(0, 8)}`, { create: true });
  await store.restoreInto(id, into);
  return tree(into);
}

async function put(dir: FileSystemDirectoryHandle, name: string, content: string | Uint8Array) {
  const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
  await writable.write(typeof content === 'string' ? content : content.slice());
  await writable.close();
}

describe('checkpoint store', () => {
  it('restores every file byte for byte at its nested path, the big one deduplicated and compressed', async () => {
    const files = new Map<string, Uint8Array>([
      ['workspace/notes.txt', new TextEncoder().encode('hello checkpoints')],
      ['workspace/deep/er/big.bin', bigFile()],
      ['.os/vm/state.bin', random(CHUNK_SIZE + 1)],
      ['workspace/empty.txt', new Uint8Array(0)],
    ]);
    const store = checkpointStore(storeDir);
    const record = await store.take(take([...files].map(([path, bytes]) => source(path, bytes))));

    expect(record.total_bytes).toBe([...files.values()].reduce((sum, bytes) => sum + bytes.byteLength, 0));
    const big = record.files['workspace/deep/er/big.bin']!.chunks;
    expect(big).toHaveLength(5);
    expect(big[1]).toEqual(big[3]); // the two zero chunks are one stored chunk
    expect(big[1]![4]).toBe(ZSTD);
    expect(big[0]![4]).toBe(STORED); // random bytes are stored as they are
    expect(record.added_bytes).toBeLessThan(3 * CHUNK_SIZE + 1 + 1234 + 17 + 1000); // the zero chunk packs to almost nothing
    expect(record.added_bytes).toBeGreaterThan(3 * CHUNK_SIZE);

    expect(await restored(store, record.id)).toEqual(files);
    expect(await store.list()).toEqual([record]);
    expect(await checkpointStore(storeDir).get(record.id)).toEqual(record); // as written to its JSON
  });

  it('takes a state in memory by the cuts and hashes begun before it', async () => {
    const state = bigFile();
    const made = await digestState(state);
    const plain = await checkpointStore(storeDir).take(take([source('.os/vm/state.bin', state, { bytes: state })]));
    expect(plain.files['.os/vm/state.bin']!.chunks.map((chunk) => chunk[0])).toEqual(made.hashes);
    // Begun with other cuts (the state whole): those are the ones kept.
    const whole = [...new Uint8Array(await crypto.subtle.digest('SHA-256', state as Uint8Array<ArrayBuffer>)).subarray(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('');
    const digest = Promise.resolve({ spans: [[0, state.byteLength]] as [number, number][], hashes: [whole], ms: { cut: 0, hash: 0 } });
    const other = checkpointStore(await root.getDirectoryHandle('other', { create: true }));
    const record = await other.take(take([source('.os/vm/state.bin', state, { bytes: state, digest })]));
    expect(record.files['.os/vm/state.bin']!.chunks.map((chunk) => chunk[0])).toEqual([whole]);
    expect((await restored(other, record.id)).get('.os/vm/state.bin')).toEqual(state);
  });

  it('stores only the changed chunk again, and never reads a file whose stamp still holds', async () => {
    const store = checkpointStore(storeDir);
    const first = random(5 * CHUNK_SIZE);
    const photo = random(10_000);
    const one = await store.take(take([source('workspace/big.bin', first), source('workspace/photo.jpg', photo, { stamp: '10000:1' })]));

    const second = first.slice();
    second[2 * CHUNK_SIZE + 17]! ^= 0xff;
    const two = await store.take(take([source('workspace/big.bin', second), never('workspace/photo.jpg', 10_000, '10000:1')]));

    expect(two.added_bytes).toBeGreaterThan(CHUNK_SIZE - 1);
    expect(two.added_bytes).toBeLessThanOrEqual(CHUNK_SIZE + 64);
    expect(two.files['workspace/photo.jpg']).toEqual(one.files['workspace/photo.jpg']);
    expect(two.changes).toMatchObject({ added: [], removed: [], changed: ['workspace/big.bin'] });
    expect(await restored(store, two.id)).toEqual(new Map([['workspace/big.bin', second], ['workspace/photo.jpg', photo]]));
    expect(await restored(store, one.id)).toEqual(new Map([['workspace/big.bin', first], ['workspace/photo.jpg', photo]]));

    // A stamp that moved on is read again.
    const reads: number[] = [];
    await store.take(take([source('workspace/photo.jpg', photo, { stamp: '10000:2' }, reads)]));
    expect(reads).toEqual([0]);
  });

  it('reuses the previous chunk for an index `unchanged` names, without reading it', async () => {
    const store = checkpointStore(storeDir);
    const disk = random(4 * CHUNK_SIZE + 500);
    await store.take(take([source('.os/vm/overlay.data', disk)]));

    const next = disk.slice();
    next.set(random(CHUNK_SIZE), 2 * CHUNK_SIZE); // the one chunk the capture copied
    next.set(random(CHUNK_SIZE), 0); // a change `unchanged` hides: the previous chunk is kept
    const reads: number[] = [];
    const two = await store.take(take([source('.os/vm/overlay.data', next, { unchanged: (index) => index !== 2 }, reads)]));
    expect(reads).toEqual([2 * CHUNK_SIZE]);
    const expected = next.slice();
    expected.set(disk.subarray(0, CHUNK_SIZE), 0);
    expect((await restored(store, two.id)).get('.os/vm/overlay.data')).toEqual(expected);

    // The last chunk of a file whose size changed is read, whatever `unchanged` says.
    const shorter = expected.slice(0, 4 * CHUNK_SIZE + 100);
    reads.length = 0;
    const three = await store.take(take([source('.os/vm/overlay.data', shorter, { unchanged: () => true }, reads)]));
    expect(reads).toEqual([4 * CHUNK_SIZE]);
    expect((await restored(store, three.id)).get('.os/vm/overlay.data')).toEqual(shorter);
  });

  it('lists added, removed and changed user files, and flags the computer and the databases', async () => {
    const store = checkpointStore(storeDir);
    const text = (value: string) => new TextEncoder().encode(value);
    const base = {
      'workspace/a.txt': text('a'),
      'workspace/b.txt': text('b'),
      'workspace/c.txt': text('c'),
      '.os/vm/state.bin': text('machine 1'),
      '.os/memory/memory.db': text('db 1'),
      '.os/config/stack.json': text('{"name":"one"}'),
    };
    const sources = (files: Record<string, Uint8Array>) => Object.entries(files).map(([path, bytes]) => source(path, bytes));

    const one = await store.take(take(sources(base)));
    expect(one.changes).toEqual({ added: ['workspace/a.txt', 'workspace/b.txt', 'workspace/c.txt'], removed: [], changed: [], computer: true, databases: true });

    const { 'workspace/a.txt': _removed, ...rest } = base;
    const second = { ...rest, 'workspace/b.txt': text('B'), 'workspace/d.txt': text('d'), '.os/memory/memory.db': text('db 2'), '.os/config/stack.json': text('{"name":"two"}') };
    const two = await store.take(take(sources(second)));
    expect(two.changes).toEqual({ added: ['workspace/d.txt'], removed: ['workspace/a.txt'], changed: ['workspace/b.txt'], computer: false, databases: true });

    const three = await store.take(take(sources({ ...second, '.os/vm/state.bin': text('machine 2') })));
    expect(three.changes).toEqual({ added: [], removed: [], changed: [], computer: true, databases: false });
  });

  it('prunes to the newest 20 and the newest of each of the last 7 days, keeping the packs still named', async () => {
    const now = new Date(2025, 5, 20, 12).getTime();
    let clock = 0;
    const store = checkpointStore(storeDir, { now: () => clock });
    const shared = random(3 * CHUNK_SIZE);
    // [days ago, hour]: the newest 20 are the 17 of the last two days and those of days 4 and 5.
    const times: number[] = [];
    for (const [days, hours] of [[9, 0], [8, 0], [6, 0], [6, 1], [6, 2], [5, 0], [5, 1], [4, 0]] as const) times.push(now - days * DAY + hours * 3_600_000);
    for (let i = 0; i < 17; i++) times.push(now - (i < 9 ? DAY : 0) + (i % 9) * 60_000 - 8 * 3_600_000);
    const own = new Map<string, Uint8Array>();
    const ids: string[] = [];
    for (const time of times) {
      clock = time;
      const mine = random(2000);
      const record = await store.take(take([source('workspace/shared.bin', shared), source('workspace/own.bin', mine)]));
      own.set(record.id, mine);
      ids.push(record.id);
    }
    expect(await store.list()).toHaveLength(25);
    const packsBefore = await names(await packs());
    expect(packsBefore).toHaveLength(25);

    clock = now;
    const gone = await store.prune();
    // Days 9 and 8 are too old; day 6 keeps only its newest.
    expect(gone.sort()).toEqual([ids[0], ids[1], ids[2], ids[3]].sort());
    const kept = (await store.list()).map((record) => record.id);
    expect(kept).toHaveLength(21);
    expect(kept).toContain(ids[4]);
    expect(await names(storeDir)).toEqual([...kept.map((id) => `${id}.json`), 'packs'].sort());

    // The first checkpoint's pack holds the shared chunks every kept one names; the others went.
    expect(await names(await packs())).toEqual([ids[0]!, ...kept].map((id) => `${id}.pack`).sort());
    for (const id of [ids[4]!, ids[24]!]) {
      expect(await restored(store, id)).toEqual(new Map([['workspace/shared.bin', shared], ['workspace/own.bin', own.get(id)!]]));
    }
    expect(await store.prune()).toEqual([]);
  });

  it('on opening, removes a pack no record names and ignores a record that does not parse', async () => {
    const photo = random(5000);
    const one = await checkpointStore(storeDir).take(take([source('workspace/photo.jpg', photo)]));
    await put(await packs(), 'c-zzz-abcdef.pack', random(300)); // a take cut short before its JSON
    await put(storeDir, 'c-abc-123456.json', '{"format":1,"id":"c-abc-1'); // a torn record
    await put(storeDir, 'c-abd-123456.json', JSON.stringify({ ...one, id: 'c-abd-123457' })); // named for another

    // A reader sweeps nothing: the pack may be a take under way in the stack's own tab.
    expect(await checkpointStore(storeDir, { owner: false }).list()).toEqual([one]);
    expect(await names(await packs())).toEqual([`${one.id}.pack`, 'c-zzz-abcdef.pack']);

    const reopened = checkpointStore(storeDir);
    expect(await reopened.list()).toEqual([one]);
    expect(await names(await packs())).toEqual([`${one.id}.pack`]);
    expect(await restored(reopened, one.id)).toEqual(new Map([['workspace/photo.jpg', photo]]));
  });

  it('refuses to restore a checkpoint whose pack is gone, as damaged', async () => {
    const store = checkpointStore(storeDir);
    const one = await store.take(take([source('workspace/a.bin', random(1000))]));
    await (await packs()).removeEntry(`${one.id}.pack`);
    const into = await root.getDirectoryHandle('out', { create: true });

    const error = await store.restoreInto(one.id, into).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CheckpointError);
    expect(error).toMatchObject({ code: 'damaged' });
    await expect(store.restoreInto('c-nope-000000', into)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('restores a checkpoint whose chunks an earlier version deflated', async () => {
    const text = new TextEncoder().encode('a line an older checkpoint deflated\n'.repeat(3000));
    const one = await checkpointStore(storeDir).take(take([source('workspace/log.txt', text)]));
    // The same checkpoint as the version before zstd wrote it: its pack's chunks deflated.
    const chunks = one.files['workspace/log.txt']!.chunks;
    const parts = chunks.map((_, i) => deflateSync(text.subarray(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE), { level: 1 }));
    let at = 0;
    const older = { ...one, files: { 'workspace/log.txt': { size: text.byteLength, chunks: chunks.map((chunk, i) => [chunk[0], one.id, (at += parts[i]!.byteLength) - parts[i]!.byteLength, parts[i]!.byteLength, DEFLATED]) } } };
    const pack = new Uint8Array(at);
    parts.reduce((offset, part) => (pack.set(part, offset), offset + part.byteLength), 0);
    await put(await packs(), `${one.id}.pack`, pack);
    await put(storeDir, `${one.id}.json`, JSON.stringify(older));

    expect(await restored(checkpointStore(storeDir), one.id)).toEqual(new Map([['workspace/log.txt', text]]));
  });

  it('refuses to restore a checkpoint with a damaged chunk, as damaged', async () => {
    const store = checkpointStore(storeDir);
    const one = await store.take(take([source('workspace/zeros.bin', new Uint8Array(3 * CHUNK_SIZE))]));
    const chunk = one.files['workspace/zeros.bin']!.chunks[0]!;
    expect(chunk[4]).toBe(ZSTD);
    const pack = new Uint8Array(await (await (await (await packs()).getFileHandle(`${one.id}.pack`)).getFile()).arrayBuffer());
    pack.fill(0x5a, chunk[2], chunk[2] + chunk[3]);
    await put(await packs(), `${one.id}.pack`, pack);

    await expect(checkpointStore(storeDir).restoreInto(one.id, await root.getDirectoryHandle('out', { create: true }))).rejects.toMatchObject({ code: 'damaged' });
  });

  it('counts its bytes as the sum of its files', async () => {
    const store = checkpointStore(storeDir);
    await store.take(take([source('workspace/big.bin', bigFile())]));
    await store.take(take([source('workspace/small.txt', random(3000))]));
    const sizes = [...(await tree(storeDir)).values()].reduce((sum, bytes) => sum + bytes.byteLength, 0);
    expect(sizes).toBeGreaterThan(2 * CHUNK_SIZE); // the big file's two random chunks, at least
    expect(await store.bytes()).toBe(sizes);
  });
});
