import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFully } from './disk.ts';
import { compress as zstdCompress, init as zstdInit } from '@bokuweb/zstd-wasm';
import { fetchImageFile, fetchManifest, fetchPristineState, fillDisk, ImageError, parseManifest, responseBytes, unpackSavedState, type FetchLike, type ImageManifest } from './image.ts';
import { sha256Hex } from '../storage/hash.ts';
import { openNodeSyncFile } from './node-file.ts';

const IMAGE_DIR = join(import.meta.dirname, '..', 'vm-images', 'out', 'latest');

async function synthetic(): Promise<{ manifest: ImageManifest; served: Map<string, Uint8Array> }> {
  const chunkSize = 1024;
  const served = new Map<string, Uint8Array>();
  const chunks = [];
  for (const index of [0, 2]) {
    const raw = new Uint8Array(chunkSize).fill(index + 1);
    const sha256 = await sha256Hex(raw);
    served.set(`disk/${sha256}.gzip`, gzipSync(raw));
    chunks.push({ index, sha256, file: `disk/${sha256}.gzip`, compressedSize: served.get(`disk/${sha256}.gzip`)!.length });
  }
  const kernel = new Uint8Array([1, 2, 3]);
  served.set('bzImage', kernel);
  const f = { file: 'bzImage', size: 3, sha256: await sha256Hex(kernel) };
  const manifest = parseManifest({
    format: 1, recipeHash: 'test', cmdline: 'x', memoryMiB: 64,
    agent: { protocol: 1, virtioConsolePort: 1, guestDevice: '/dev/hvc1' },
    files: { kernel: f, initrd: f, bios: f, vgaBios: f },
    disk: { size: 3 * chunkSize, chunkSize, compression: 'gzip', chunks },
  });
  return { manifest, served };
}

function fakeFetch(served: Map<string, Uint8Array>, failures: Map<string, number> = new Map()): FetchLike {
  return async (url) => {
    const path = url.replace(/^base\//, '');
    const left = failures.get(path) ?? 0;
    if (left > 0) {
      failures.set(path, left - 1);
      if (left % 2) throw new TypeError('network down');
      return new Response(gzipSync(new Uint8Array(1024)), { status: 200 }); // wrong bytes
    }
    const body = served.get(path);
    return body ? new Response(body as Uint8Array<ArrayBuffer>) : new Response('no', { status: 404 });
  };
}

const tmpFile = () => openNodeSyncFile(join(mkdtempSync(join(tmpdir(), 'vm-image-')), 'disk.img'));

describe('image (synthetic)', () => {
  it('fetches the pristine state, checks it, and has none when the manifest names none', async () => {
    const { manifest, served } = await synthetic();
    expect(await fetchPristineState(manifest, 'base', { fetch: fakeFetch(served) })).toBeNull();
    const state = new Uint8Array(5000).map((_, i) => i % 251);
    served.set('state.gzip', gzipSync(state));
    const withState = parseManifest({ ...manifest, pristineState: { file: 'state.gzip', size: state.length, sha256: await sha256Hex(state), compressedSize: served.get('state.gzip')!.length } });
    const got = await fetchPristineState(withState, 'base', { fetch: fakeFetch(served, new Map([['state.gzip', 1]])) });
    expect(new Uint8Array(got!)).toEqual(state);
    served.set('state.gzip', gzipSync(state.map((b) => b ^ 1)));
    await expect(fetchPristineState(withState, 'base', { fetch: fakeFetch(served) })).rejects.toMatchObject({ code: 'checksum' });
    expect(() => parseManifest({ ...manifest, pristineState: { file: 'state.gzip' } })).toThrow(/pristineState/);
    const boot = { file: 'bootstate.zstd', size: 4, sha256: 'a'.repeat(64), compressedSize: 3 };
    expect(parseManifest({ ...manifest, bootState: { ...boot, packedSha256: 'b'.repeat(64) } }).bootState?.packedSha256).toBe('b'.repeat(64));
    expect(() => parseManifest({ ...manifest, bootState: { ...boot, packedSha256: 'nope' } })).toThrow(/bootState.packedSha256 is not a sha256/);
  });

  it('unpacks a zstd state as it arrives, in pieces of any size, and one a server already unpacked', async () => {
    await zstdInit();
    const { manifest } = await synthetic();
    const state = new Uint8Array(300_000).map((_, i) => (i * 7) % 253);
    const packed = zstdCompress(state, 19);
    const entry = { file: 'state.zstd', size: state.length, sha256: await sha256Hex(state), compressedSize: packed.length };
    const withState = parseManifest({ ...manifest, pristineState: entry });
    const trickled = (bytes: Uint8Array): FetchLike => async () =>
      new Response(new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += at < 30 ? 3 : 4096) controller.enqueue(bytes.slice(at, Math.min(bytes.length, at + (at < 30 ? 3 : 4096))));
          controller.close();
        },
      }));
    // Three bytes at a time at first: the format is told by four.
    expect(new Uint8Array((await fetchPristineState(withState, 'base', { fetch: trickled(packed) }))!)).toEqual(state);
    expect(new Uint8Array((await fetchPristineState(withState, 'base', { fetch: trickled(state) }))!)).toEqual(state);
    expect(unpackSavedState(packed, state.length)).toEqual(state);
    expect(unpackSavedState(gzipSync(state), state.length)).toEqual(state);

    const refusal = (bytes: Uint8Array) => fetchPristineState(withState, 'base', { fetch: trickled(bytes), attempts: 1 });
    await expect(refusal(packed.subarray(0, packed.length - 100))).rejects.toMatchObject({ code: 'checksum', message: expect.stringMatching(/does not unpack|bytes, expected/) });
    await expect(refusal(zstdCompress(new Uint8Array(state.length + 1), 3))).rejects.toMatchObject({ code: 'checksum', message: expect.stringMatching(/more than the 300000 bytes/) });
    await expect(refusal(zstdCompress(state.map((b) => b ^ 1), 3))).rejects.toMatchObject({ code: 'checksum', message: expect.stringMatching(/is corrupt/) });
    expect(() => unpackSavedState(new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]), 10)).toThrow(ImageError);
    // Hundreds of trickled fetches: 7.7 s on a quiet machine, past 20 s on one building the image.
  }, 60_000);

  it('reads chunks and files through a Blob, never Response.arrayBuffer (whose memory Chromium keeps in a worker)', async () => {
    const { manifest, served } = await synthetic();
    const viaBlobOnly: FetchLike = async (url) => {
      const response = await fakeFetch(served)(url);
      response.arrayBuffer = () => Promise.reject(new Error('read through Response.arrayBuffer'));
      return response;
    };
    expect(new Uint8Array(await fetchImageFile(manifest, 'base', 'kernel', { fetch: viaBlobOnly, attempts: 1 }))).toEqual(new Uint8Array([1, 2, 3]));
    expect(await responseBytes(new Response(new Uint8Array([4, 5])))).toEqual(new Uint8Array([4, 5]));
  });

  it('rejects invalid manifests with a reason', () => {
    expect(() => parseManifest({ format: 2 })).toThrow(/format 2/);
    expect(() => parseManifest(null)).toThrow(ImageError);
  });

  it('fills a disk, leaving unlisted chunks zero, reporting progress', async () => {
    const { manifest, served } = await synthetic();
    const file = tmpFile();
    const seen: number[] = [];
    await fillDisk(manifest, 'base', file, { fetch: fakeFetch(served), onProgress: (p) => seen.push(p.chunksDone) });
    expect(seen).toEqual([0, 1, 2]);
    expect(file.size).toBe(3072);
    const all = new Uint8Array(3072);
    readFully(file, all, 0);
    expect([all[0], all[1023], all[1024], all[2047], all[2048], all[3071]]).toEqual([1, 1, 0, 0, 3, 3]);
  });

  it('retries a chunk after a network error and a checksum mismatch', async () => {
    const { manifest, served } = await synthetic();
    const failures = new Map([[manifest.disk.chunks[1]!.file, 2]]);
    await fillDisk(manifest, 'base', tmpFile(), { fetch: fakeFetch(served, failures) });
    expect(failures.get(manifest.disk.chunks[1]!.file)).toBe(0);
  });

  it('names the chunk that keeps failing', async () => {
    const { manifest, served } = await synthetic();
    const failures = new Map([[manifest.disk.chunks[1]!.file, 10]]);
    const error = await fillDisk(manifest, 'base', tmpFile(), { fetch: fakeFetch(served, failures), attempts: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageError);
    expect((error as ImageError).message).toMatch(/disk chunk 2 .* failed after 2 attempts/);
  });

  it('turns a quota error into a clear ImageError', async () => {
    const { manifest, served } = await synthetic();
    const file = tmpFile();
    file.write = () => {
      throw new DOMException('full', 'QuotaExceededError');
    };
    await expect(fillDisk(manifest, 'base', file, { fetch: fakeFetch(served) })).rejects.toMatchObject({ code: 'quota' });
  });

  it('fetches a boot file and checks it', async () => {
    const { manifest, served } = await synthetic();
    const buf = await fetchImageFile(manifest, 'base', 'kernel', { fetch: fakeFetch(served) });
    expect([...new Uint8Array(buf)]).toEqual([1, 2, 3]);
    served.set('bzImage', new Uint8Array([1, 2, 4]));
    await expect(fetchImageFile(manifest, 'base', 'kernel', { fetch: fakeFetch(served), attempts: 1 })).rejects.toMatchObject({ code: 'checksum' });
  });
});

// Uses the real built image over a local HTTP server (fills 2 GiB sparse; ~10 s).
describe.skipIf(!existsSync(join(IMAGE_DIR, 'manifest.json')) || process.env.STACKDOCS_SKIP_VM_BOOT === '1')('image (real, over HTTP)', () => {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      try {
        res.end(readFileSync(join(IMAGE_DIR, decodeURIComponent(req.url ?? '/').replace(/\.\./g, ''))));
      } catch {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => server?.close());

  it('fetches the manifest, the kernel, and fills the disk', async () => {
    const manifest = await fetchManifest(base);
    expect(manifest.disk.chunks.length).toBeGreaterThan(0);
    const kernel = await fetchImageFile(manifest, base, 'kernel');
    expect(kernel.byteLength).toBe(manifest.files.kernel.size);
    const file = tmpFile();
    const started = performance.now();
    let last = 0;
    await fillDisk(manifest, base, file, { onProgress: (p) => (last = p.chunksDone) });
    console.log(`fill ${manifest.disk.chunks.length} chunks: ${Math.round(performance.now() - started)} ms`);
    expect(last).toBe(manifest.disk.chunks.length);
    expect(file.size).toBe(manifest.disk.size);
  }, 180_000);
});
