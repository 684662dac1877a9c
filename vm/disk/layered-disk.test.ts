import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { compress as zstdCompress, init as zstdInit } from '@bokuweb/zstd-wasm';
import { describe, expect, it } from 'vitest';
import type { SyncFile } from '../disk.ts';
import { isPackedState, type ImageManifest } from '../image.ts';
import { BaseChunks } from './base-chunks.ts';
import type { ChunkFiles } from './chunk-files.ts';
import { useArrayBufferTransfer } from '../testing/test-transfer.ts';
import { LayeredDisk } from './layered-disk.ts';
import { BLOCK_SIZE, Overlay, OverlayError } from './overlay.ts';

/** A growable in-memory file with the SyncFile interface. */
function memoryFile(): SyncFile & { bytes(): Uint8Array } {
  let data = new Uint8Array(0);
  let size = 0;
  const grow = (to: number) => {
    if (to <= data.length) return;
    const next = new Uint8Array(Math.max(to, data.length * 2));
    next.set(data.subarray(0, size));
    data = next;
  };
  return {
    read(buffer, at) {
      const n = Math.max(0, Math.min(buffer.length, size - at));
      buffer.set(data.subarray(at, at + n));
      return n;
    },
    write(buffer, at) {
      grow(at + buffer.length);
      data.set(buffer, at);
      size = Math.max(size, at + buffer.length);
      return buffer.length;
    },
    flush() {},
    get size() {
      return size;
    },
    truncate(to) {
      grow(to);
      if (to < size) data.fill(0, to, size);
      size = to;
    },
    close() {},
    bytes: () => data.slice(0, size),
  };
}

const CHUNK = 64 * 1024;
const DISK = 8 * CHUNK;

/** An image of 8 chunks: 0-3 and 6 hold random bytes, 4, 5 and 7 are zeros (not listed). */
function image() {
  const disk = new Uint8Array(DISK);
  const served = new Map<string, Uint8Array>();
  const chunks: ImageManifest['disk']['chunks'] = [];
  for (const index of [0, 1, 2, 3, 6]) {
    const raw = randomBytes(CHUNK);
    disk.set(raw, index * CHUNK);
    const sha256 = createHash('sha256').update(raw).digest('hex');
    const packed = gzipSync(raw);
    served.set(`base/disk/${sha256}.gzip`, packed);
    chunks.push({ index, sha256, file: `disk/${sha256}.gzip`, compressedSize: packed.length, gzipSha256: createHash('sha256').update(packed).digest('hex') });
  }
  const manifest = { recipeHash: 'r1', disk: { size: DISK, chunkSize: CHUNK, compression: 'gzip', chunks, wakeSet: [3] } } as unknown as ImageManifest;
  return { disk, served, manifest };
}

function memoryChunkFiles(): ChunkFiles & { map: Map<string, Uint8Array> } {
  const map = new Map<string, Uint8Array>();
  return {
    map,
    read: async (sha) => map.get(sha) ?? null,
    write: async (sha, bytes) => void map.set(sha, bytes.slice()),
    remove: async (sha) => void map.delete(sha),
    list: async () => new Set(map.keys()),
  };
}

function server(served: Map<string, Uint8Array>) {
  const requests: string[] = [];
  let down = false;
  const fetch = async (url: string) => {
    requests.push(url);
    if (down) throw new TypeError('Failed to fetch');
    const body = served.get(url);
    if (!body) return new Response('missing', { status: 404 });
    const response = new Response(body as Uint8Array<ArrayBuffer>);
    // Chunks are read through a Blob (vm/image.ts, responseBytes): Chromium keeps what this takes.
    response.arrayBuffer = () => Promise.reject(new Error('a chunk read through Response.arrayBuffer'));
    return response;
  };
  return { fetch, requests, setDown: (value: boolean) => (down = value) };
}

function setup() {
  const img = image();
  const srv = server(img.served);
  const files = memoryChunkFiles();
  const waits: (string | null)[] = [];
  const base = new BaseChunks(img.manifest, 'base', files, { fetch: srv.fetch, onWaiting: (r) => waits.push(r), retryMs: [5, 20] });
  const data = memoryFile();
  const map = memoryFile();
  const overlay = Overlay.create(data, map, DISK);
  const disk = new LayeredDisk(overlay, base);
  return { ...img, imageBytes: img.disk, srv, files, base, data, map, overlay, disk, waits };
}

const read = (disk: LayeredDisk, offset: number, len: number) => new Promise<Uint8Array>((resolve) => disk.get(offset, len, resolve));
const write = (disk: LayeredDisk, offset: number, bytes: Uint8Array) => new Promise<void>((resolve) => disk.set(offset, bytes, resolve));

describe('Overlay', () => {
  it('keeps written blocks across a reopen and packs them one after another', () => {
    const data = memoryFile();
    const map = memoryFile();
    const overlay = Overlay.create(data, map, DISK);
    const a = new Uint8Array(BLOCK_SIZE).fill(7);
    const b = new Uint8Array(BLOCK_SIZE).fill(9);
    overlay.write(100, a);
    overlay.write(3, b);
    overlay.write(100, new Uint8Array([1, 2, 3]), 10); // in place
    expect(overlay.blockCount).toBe(2);
    expect(data.size).toBe(4096 + 2 * BLOCK_SIZE);

    const again = Overlay.open(data, map, DISK);
    expect([...again.blocks()]).toEqual([3, 100]);
    const out = new Uint8Array(BLOCK_SIZE);
    again.read(100, out);
    expect([...out.subarray(8, 14)]).toEqual([7, 7, 1, 2, 3, 7]);
    again.read(3, out);
    expect(out.every((v) => v === 9)).toBe(true);
    expect(again.has(4)).toBe(false);
  });

  it('forgets a block whose map entry never reached the file, and a slot whose data was cut', () => {
    const data = memoryFile();
    const map = memoryFile();
    const overlay = Overlay.create(data, map, DISK);
    overlay.write(1, new Uint8Array(BLOCK_SIZE).fill(1));
    overlay.write(2, new Uint8Array(BLOCK_SIZE).fill(2));
    // Killed after block 2's data and before its map entry:
    map.truncate(map.size - 4);
    let again = Overlay.open(data, map, DISK);
    expect([...again.blocks()]).toEqual([1]);
    expect(data.size).toBe(4096 + BLOCK_SIZE); // the orphan slot is dropped
    again.write(5, new Uint8Array(BLOCK_SIZE).fill(5));
    // Killed with block 5's data half written after its entry was (not the order we write, but
    // a torn file must still not be trusted):
    data.truncate(data.size - 100);
    again = Overlay.open(data, map, DISK);
    expect([...again.blocks()]).toEqual([1]);
  });

  it('keeps a block the storage had no room for and stores it once there is room; flush fails until then', () => {
    const data = memoryFile();
    const map = memoryFile();
    const overlay = Overlay.create(data, map, DISK);
    let room = 4096 + BLOCK_SIZE; // the header and one block
    const write = data.write.bind(data);
    data.write = (buffer, at) => {
      if (at + buffer.length > room) throw new DOMException('full', 'QuotaExceededError');
      return write(buffer, at);
    };
    overlay.write(1, new Uint8Array(BLOCK_SIZE).fill(1));
    overlay.write(2, new Uint8Array(BLOCK_SIZE).fill(2)); // no room: kept
    overlay.write(2, new Uint8Array([9]), 5);
    expect(overlay.has(2)).toBe(true);
    expect(overlay.pendingCount).toBe(1);
    const out = new Uint8Array(8);
    overlay.read(2, out);
    expect([...out]).toEqual([2, 2, 2, 2, 2, 9, 2, 2]);
    expect(() => overlay.flush()).toThrow(/full/);
    room = Infinity;
    overlay.flush();
    expect(overlay.pendingCount).toBe(0);
    const again = Overlay.open(data, map, DISK);
    again.read(2, out);
    expect([...out]).toEqual([2, 2, 2, 2, 2, 9, 2, 2]);
    expect([...again.blocks()]).toEqual([1, 2]);
  });

  it('refuses files of another disk or that do not belong together', () => {
    const data = memoryFile();
    const map = memoryFile();
    Overlay.create(data, map, DISK);
    expect(() => Overlay.open(data, map, DISK * 2)).toThrow(OverlayError);
    const other = memoryFile();
    Overlay.create(other, memoryFile(), DISK);
    expect(() => Overlay.open(other, map, DISK)).toThrow(/do not belong together/);
    const junk = memoryFile();
    junk.write(new Uint8Array(100).fill(65), 0);
    expect(() => Overlay.open(data, junk, DISK)).toThrow(/bad magic/);
  });
});

describe('LayeredDisk', () => {
  it('reads the image through its chunks, zeros where the image lists none, fetching each chunk once', async () => {
    const s = setup();
    const whole = await read(s.disk, 0, DISK);
    expect(Buffer.from(whole).equals(Buffer.from(s.imageBytes))).toBe(true);
    expect(s.srv.requests.length).toBe(5); // the five listed chunks, once each
    await read(s.disk, CHUNK * 6 + 10, 100);
    expect(s.srv.requests.length).toBe(5);
  });

  it('answers the first sector at once once its chunk is pinned (v86 reads it synchronously for the geometry)', async () => {
    const s = setup();
    expect(s.disk.get_from_cache(0, 512)).toBeUndefined();
    await s.base.pin(0);
    for (let i = 1; i < 40; i++) await s.base.load(i % 4); // more than the cache holds
    expect(Buffer.from(s.disk.get_from_cache(0, 512)!).equals(Buffer.from(s.imageBytes.subarray(0, 512)))).toBe(true);
  });

  it('keeps what the guest wrote, merging a partial block with the image around it', async () => {
    const s = setup();
    const sector = new Uint8Array(512).fill(0xab);
    await write(s.disk, CHUNK + 1024, sector); // inside chunk 1, not block-aligned
    expect(s.disk.dirty).toBe(true);
    const expected = imageOf(s).slice(CHUNK, CHUNK + BLOCK_SIZE);
    expected.set(sector, 1024);
    expect(Buffer.from(await read(s.disk, CHUNK, BLOCK_SIZE)).equals(Buffer.from(expected))).toBe(true);
    // Only that one block is the stack's
    expect([...s.overlay.blocks()]).toEqual([CHUNK / BLOCK_SIZE]);
    // A whole block into a zero chunk needs no fetch
    const before = s.srv.requests.length;
    await write(s.disk, 4 * CHUNK, new Uint8Array(BLOCK_SIZE).fill(1));
    expect(s.srv.requests.length).toBe(before);
    expect((await read(s.disk, 4 * CHUNK + BLOCK_SIZE - 2, 4))).toEqual(new Uint8Array([1, 1, 0, 0]));
  });

  it('answers a read issued right after a write with that write, even while the write waits for its chunk', async () => {
    const s = setup();
    const done: string[] = [];
    s.disk.set(2 * CHUNK + 512, new Uint8Array(512).fill(5), () => done.push('write'));
    const result = read(s.disk, 2 * CHUNK, 2048).then((bytes) => (done.push('read'), bytes));
    const bytes = await result;
    expect(done).toEqual(['write', 'read']);
    expect(bytes.subarray(512, 1024).every((v) => v === 5)).toBe(true);
    expect(Buffer.from(bytes.subarray(0, 512)).equals(Buffer.from(imageOf(s).subarray(2 * CHUNK, 2 * CHUNK + 512)))).toBe(true);
    await s.disk.settled();
  });

  it('copies what it writes later: v86 reuses its buffer', async () => {
    const s = setup();
    const buffer = new Uint8Array(512).fill(3);
    const pending = write(s.disk, 3 * CHUNK + 512, buffer);
    buffer.fill(4); // v86's next command
    await pending;
    expect((await read(s.disk, 3 * CHUNK + 512, 512)).every((v) => v === 3)).toBe(true);
  });

  it('makes a read wait while its chunk cannot be fetched, says why, and never hands out other bytes', async () => {
    const s = setup();
    s.srv.setDown(true);
    let got: Uint8Array | null = null;
    s.disk.get(6 * CHUNK, 1024, (bytes) => (got = bytes));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(got).toBeNull();
    // How much is missing and what to do, not the chunk's address.
    const missing = s.manifest.disk.chunks.reduce((sum, chunk) => sum + chunk.compressedSize, 0);
    expect(s.waits[0]).toBe(`The computer needs ${Math.max(1, Math.round(missing / 1e6))} MB of its system image that this browser has not downloaded yet, and the image's server cannot be reached. Connect to the internet: the program reading the disk waits and carries on once the parts arrive.`);
    expect(s.waits[0]).not.toContain('base/');
    let settled = false;
    void s.disk.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBe(false); // a save waits for it too
    s.srv.setDown(false);
    await vi_waitFor(() => got !== null);
    expect(Buffer.from(got!).equals(Buffer.from(imageOf(s).subarray(6 * CHUNK, 6 * CHUNK + 1024)))).toBe(true);
    expect(s.waits.at(-1)).toBeNull();
    await s.disk.settled();
  });

  it('stores chunks compressed, refetches a damaged one, and refuses a chunk whose checksum is wrong', async () => {
    const s = setup();
    await read(s.disk, 0, 512);
    await vi_waitFor(() => s.files.map.size === 1);
    const [sha] = [...s.files.map.keys()];
    expect(s.files.map.get(sha!)![0]).toBe(0x1f); // gzip as shipped
    // Damaged in storage: a new reader fetches it again.
    s.files.map.set(sha!, new Uint8Array([1, 2, 3]));
    const fresh = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    const before = s.srv.requests.length;
    expect(Buffer.from(await fresh.load(0)).equals(Buffer.from(imageOf(s).subarray(0, CHUNK)))).toBe(true);
    expect(s.srv.requests.length).toBe(before + 1);
    // A server handing out other bytes
    const chunk1 = s.manifest.disk.chunks[1]!;
    s.served.set(`base/${chunk1.file}`, gzipSync(randomBytes(CHUNK)));
    await expect(fresh.load(1)).rejects.toMatchObject({ code: 'checksum' });
    expect(s.files.map.has(chunk1.sha256)).toBe(false);
    // The same bytes compressed otherwise (another gzip hash): checked by their inflated hash.
    const chunk2 = s.manifest.disk.chunks[2]!;
    s.served.set(`base/${chunk2.file}`, gzipSync(imageOf(s).subarray(2 * CHUNK, 3 * CHUNK), { level: 1 }));
    expect(Buffer.from(await fresh.load(2)).equals(Buffer.from(imageOf(s).subarray(2 * CHUNK, 3 * CHUNK)))).toBe(true);
  });

  it('with storage full, a guest read still gets its chunk (kept in memory), while the download says so', async () => {
    const s = setup();
    s.files.write = async () => {
      throw new DOMException('over quota', 'QuotaExceededError');
    };
    const bytes = await read(s.disk, 6 * CHUNK + 10, 100);
    expect(Buffer.from(bytes).equals(Buffer.from(imageOf(s).subarray(6 * CHUNK + 10, 6 * CHUNK + 110)))).toBe(true);
    expect(s.files.map.size).toBe(0);
    await s.disk.settled();
    await expect(s.base.downloadAll()).rejects.toMatchObject({ code: 'quota' });
  });

  it('answers a guest read once its chunk is checked, while storing it goes on', async () => {
    const s = setup();
    let release = () => {};
    const write = s.files.write;
    s.files.write = (sha, bytes) => new Promise<void>((resolve) => (release = resolve)).then(() => write(sha, bytes));
    const bytes = await read(s.disk, 6 * CHUNK, 512);
    expect(Buffer.from(bytes).equals(Buffer.from(imageOf(s).subarray(6 * CHUNK, 6 * CHUNK + 512)))).toBe(true);
    expect(s.files.map.size).toBe(0);
    s.files.write = write;
    release();
    await vi_waitFor(() => s.files.map.size === 1);
    // The download counts it, and does not fetch it again.
    const fetched = s.srv.requests.length;
    await s.base.downloadAll();
    expect(s.srv.requests.length - fetched).toBe(4); // 0-3
  });

  it('a read from storage reads the chunks after it ahead', async () => {
    const s = setup();
    await s.base.downloadAll();
    const fresh = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    const disk = new LayeredDisk(Overlay.create(memoryFile(), memoryFile(), DISK), fresh);
    await read(disk, 0, 512);
    await vi_waitFor(() => fresh.peek(3) !== null);
    expect(fresh.peek(1)).not.toBeNull();
    expect(fresh.peek(2)).not.toBeNull();
  });

  it('notes when a guest read last waited for a chunk, not when one was in memory nor for the download or a warm start', async () => {
    const s = setup();
    expect(s.base.lastWaitedAt).toBe(0);
    const before = Date.now();
    await read(s.disk, 2 * CHUNK, 512);
    const waited = s.base.lastWaitedAt;
    expect(waited).toBeGreaterThanOrEqual(before);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await read(s.disk, 2 * CHUNK + 4096, 512); // in memory now
    await read(s.disk, 7 * CHUNK, 512); // all zeros: no chunk to wait for
    await s.base.downloadAll(); // fetches the rest: not the guest waiting
    expect(s.base.lastWaitedAt).toBe(waited);
    // A next start loading stored chunks ahead of the guest is not the guest waiting either.
    const fresh = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    expect(await fresh.warm([0, 1, 3])).toBe(3);
    expect(fresh.lastWaitedAt).toBe(0);
    await read(new LayeredDisk(Overlay.create(memoryFile(), memoryFile(), DISK), fresh), 6 * CHUNK, 512); // from storage
    expect(fresh.lastWaitedAt).toBeGreaterThanOrEqual(waited);
  });

  it('gives back the chunks kept in memory when trimmed, but for the ones read last and any it could not store', async () => {
    const s = setup();
    const unstored = s.manifest.disk.chunks.find((chunk) => chunk.index === 6)!;
    const write = s.files.write;
    s.files.write = async (sha, bytes) => {
      if (sha === unstored.sha256) throw new DOMException('over quota', 'QuotaExceededError');
      return write(sha, bytes);
    };
    for (const index of [6, 0, 1, 2]) await read(s.disk, index * CHUNK, 512);
    await s.disk.settled();
    await vi_waitFor(() => s.files.map.size === 3);
    const fetched = s.srv.requests.length;
    // The last read within the budget stays, as does 6 (no other copy); 0 and 1 go.
    s.base.trim(s.manifest.disk.chunks.find((chunk) => chunk.index === 2)!.compressedSize + unstored.compressedSize);
    expect(s.base.peek(2)).not.toBeNull();
    expect(s.base.peek(6)).not.toBeNull();
    expect(s.base.peek(0)).toBeNull();
    expect(s.base.peek(1)).toBeNull();
    // Read again from storage, not the network, and the same bytes.
    const again = await read(s.disk, 0, 512);
    expect(Buffer.from(again).equals(Buffer.from(imageOf(s).subarray(0, 512)))).toBe(true);
    expect(s.srv.requests.length).toBe(fetched);
  });

  it('remembers the chunks the guest read last, and a next start loads them ahead from storage alone', async () => {
    const s = setup();
    await read(s.disk, 2 * CHUNK, 512);
    await read(s.disk, 0, 512);
    await read(s.disk, 6 * CHUNK + 100, 512);
    await read(s.disk, 2 * CHUNK + 4096, 512); // 2 again: most recent
    expect(s.base.recentlyUsed()).toEqual([2, 6, 0]);
    expect(s.base.recentlyUsed(s.manifest.disk.chunks[2]!.compressedSize)).toEqual([2]);

    // A next start, offline: the stored chunks come from storage, before any read asks.
    s.srv.setDown(true);
    const fresh = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    expect(fresh.peek(6)).toBeNull();
    expect(await fresh.warm([2, 6, 0, 1])).toBe(3); // 1 was never stored: nothing fetched
    expect(Buffer.from(fresh.peek(6)!).equals(Buffer.from(imageOf(s).subarray(6 * CHUNK, 7 * CHUNK)))).toBe(true);
    expect(fresh.peek(1)).toBeNull();
    // Within its budget only.
    const small = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    expect(await small.warm([2, 6, 0], s.manifest.disk.chunks[2]!.compressedSize + 10)).toBe(1);
  });

  it('downloads the rest of the image with progress, the wake set first, and knows when it is all there', async () => {
    const s = setup();
    await read(s.disk, 0, 512); // chunk 0 is there already (stored just after the read)
    await vi_waitFor(() => s.files.map.size === 1);
    const seen: number[] = [];
    const progress = await s.base.downloadAll((p) => seen.push(p.chunksDone));
    expect(progress).toMatchObject({ chunksDone: 5, chunksTotal: 5 });
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    const order = s.srv.requests.slice(1).map((url) => s.manifest.disk.chunks.find((c) => url.endsWith(c.file))!.index);
    expect(order[0]).toBe(3); // the wake set
    // Offline now: every read still works from this browser.
    s.srv.setDown(true);
    const fresh = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    const disk = new LayeredDisk(Overlay.create(memoryFile(), memoryFile(), DISK), fresh);
    expect(Buffer.from(await read(disk, 0, DISK)).equals(Buffer.from(imageOf(s)))).toBe(true);
  });

  describe('the background download', () => {
    useArrayBufferTransfer();
    it("drops the bytes of each chunk it stored without detaching them (the browser's own: see let-go.ts), and a guest read sharing a fetch keeps its bytes", async () => {
      const s = setup();
      const handed: [string, Uint8Array][] = [];
      const write = s.files.write;
      s.files.write = async (sha, bytes) => {
        handed.push([sha, bytes]);
        await write(sha, bytes);
      };
      // A guest read of chunk 2 while the download fetches it: the read keeps its packed bytes.
      const [, guest] = await Promise.all([s.base.downloadAll(), read(s.disk, 2 * CHUNK, 512)]);
      expect(Buffer.from(guest).equals(Buffer.from(imageOf(s).subarray(2 * CHUNK, 2 * CHUNK + 512)))).toBe(true);
      expect(handed.length).toBe(5);
      expect(handed.every(([, bytes]) => bytes.byteLength > 0)).toBe(true); // dropped, never detached
      // Every chunk is stored whole all the same, and reads back.
      expect(Buffer.from(await read(s.disk, 0, DISK)).equals(Buffer.from(imageOf(s)))).toBe(true);
    });
  });

  it('keeps the boot state beside the chunks: fetched and checked once, then read offline; the download fetches it last; a corrupt one is refused', async () => {
    await zstdInit();
    const s = setup();
    const raw = randomBytes(3 * CHUNK);
    const sha256 = createHash('sha256').update(raw).digest('hex');
    s.manifest.bootState = { file: 'bootstate.zstd', size: raw.length, sha256, compressedSize: 0 };
    s.served.set('base/bootstate.zstd', zstdCompress(raw, 3));
    const [first, second] = await Promise.all([s.base.bootState(), s.base.bootState()]);
    expect(Buffer.from(first!).equals(raw)).toBe(true);
    expect(second).toBe(first); // one fetch for a cold boot and the download together
    expect(s.srv.requests.filter((url) => url.endsWith('bootstate.zstd'))).toHaveLength(1);
    expect(s.files.map.has(sha256)).toBe(true);
    s.srv.setDown(true);
    const offline = new BaseChunks(s.manifest, 'base', s.files, { fetch: s.srv.fetch });
    expect(Buffer.from((await offline.bootState())!).equals(raw)).toBe(true);

    const d = setup();
    d.manifest.bootState = s.manifest.bootState;
    d.served.set('base/bootstate.zstd', zstdCompress(raw, 3));
    await d.base.downloadAll();
    expect(d.srv.requests.at(-1)).toBe('base/bootstate.zstd');
    expect(d.files.map.has(sha256)).toBe(true);

    const c = setup();
    c.manifest.bootState = s.manifest.bootState;
    c.served.set('base/bootstate.zstd', zstdCompress(randomBytes(3 * CHUNK), 3));
    await expect(c.base.bootState()).rejects.toThrow(/boot state \(bootstate.zstd\) is corrupt/);
    expect(c.files.map.has(sha256)).toBe(false);
    expect(await new BaseChunks({ ...c.manifest, bootState: undefined } as ImageManifest, 'base', c.files).bootState()).toBeNull();

    // The download only keeps it: checked by the shipped file's own hash where the manifest gives
    // one; a body that is not that file (an older gzip one, one sent unpacked) is unpacked to be
    // checked and kept packed; a corrupt one is refused with nothing kept.
    const zstd = zstdCompress(raw, 3);
    const packedSha256 = createHash('sha256').update(zstd).digest('hex');
    for (const [body, kept] of [[zstd, zstd], [gzipSync(raw), null], [raw, null]] as const) {
      const k = setup();
      k.manifest.bootState = { ...s.manifest.bootState, packedSha256 };
      k.served.set('base/bootstate.zstd', body);
      await k.base.downloadAll();
      const stored = k.files.map.get(sha256)!;
      expect(isPackedState(stored)).toBe(true);
      if (kept) expect(Buffer.from(stored).equals(Buffer.from(kept))).toBe(true);
      k.srv.setDown(true);
      expect(Buffer.from((await new BaseChunks(k.manifest, 'base', k.files, { fetch: k.srv.fetch }).bootState())!).equals(raw)).toBe(true);
    }
    const bad = setup();
    bad.manifest.bootState = { ...s.manifest.bootState, packedSha256 };
    bad.served.set('base/bootstate.zstd', zstdCompress(randomBytes(3 * CHUNK), 3));
    await expect(bad.base.downloadAll()).rejects.toThrow(/boot state \(bootstate.zstd\) is corrupt/);
    expect(bad.files.map.has(sha256)).toBe(false);

    // An image from before zstd ships it as gzip; a server may send it unpacked (Content-Encoding):
    // either is read, and kept packed.
    for (const body of [gzipSync(raw), raw]) {
      const o = setup();
      o.manifest.bootState = s.manifest.bootState;
      o.served.set('base/bootstate.zstd', body);
      expect(Buffer.from((await o.base.bootState())!).equals(raw)).toBe(true);
      expect(isPackedState(o.files.map.get(sha256)!)).toBe(true);
      o.srv.setDown(true);
      expect(Buffer.from((await new BaseChunks(o.manifest, 'base', o.files, { fetch: o.srv.fetch }).bootState())!).equals(raw)).toBe(true);
    }
  });
});

/** The image the setup's server serves, whole. */
function imageOf(s: ReturnType<typeof setup>): Uint8Array {
  return s.imageBytes;
}

async function vi_waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
