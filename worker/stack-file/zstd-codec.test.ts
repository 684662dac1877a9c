import { describe, expect, it } from 'vitest';
import { loadZstd } from '../zstd.ts';
import { FRAME_BYTES, frameAt, zstdCompressor, zstdDecompressor, ZstdDataError } from './zstd-codec.ts';

/** Runs `bytes` through a stream in pieces of `piece` bytes and joins what comes out. */
async function through(stream: TransformStream<Uint8Array, Uint8Array>, bytes: Uint8Array, piece: number): Promise<Uint8Array> {
  const writing = (async () => {
    const writer = stream.writable.getWriter();
    for (let at = 0; at < bytes.byteLength; at += piece) await writer.write(bytes.slice(at, at + piece));
    await writer.close();
  })();
  writing.catch(() => {}); // a refused input fails the readable below, and this write with it
  const parts: Uint8Array[] = [];
  for await (const part of stream.readable as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  await writing;
  return new Uint8Array(await new Blob(parts as Uint8Array<ArrayBuffer>[]).arrayBuffer());
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

function sample(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = i % 7 === 0 ? (i * 2654435761) >>> 24 : 65 + (i % 26);
  return bytes;
}

describe('zstd entries', () => {
  it('round-trips any size, cut into frames of a MiB, whatever pieces the reader is handed', async () => {
    const zstd = await loadZstd();
    for (const [size, piece] of [[0, 1], [1, 1], [5000, 7], [FRAME_BYTES, 65536], [2 * FRAME_BYTES + 5, 300_001]] as const) {
      const original = sample(size);
      const packed = await through(zstdCompressor(zstd), original, 100_000);
      expect(packed.byteLength).toBeLessThan(Math.max(64, size));
      const frames = Math.ceil(size / FRAME_BYTES);
      let count = 0;
      for (let rest = packed; rest.byteLength; count++) rest = rest.subarray(frameAt(rest)!.length);
      expect(count).toBe(frames);
      expect(same(await through(zstdDecompressor(zstd), packed, piece), original), `${size} bytes in pieces of ${piece}`).toBe(true);
    }
  });

  it('skips skippable frames and refuses what this app never writes', async () => {
    const zstd = await loadZstd();
    const frame = zstd.compress(sample(1000), 1);
    const skippable = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    expect(await through(zstdDecompressor(zstd), new Uint8Array([...skippable, ...frame]), 4)).toEqual(sample(1000));
    // A frame claiming more than a MiB (a bomb's way in), a cut frame, bytes that are not zstd.
    const big = zstd.compress(new Uint8Array(FRAME_BYTES + 1), 1);
    await expect(through(zstdDecompressor(zstd), big, 65536)).rejects.toThrow(ZstdDataError);
    await expect(through(zstdDecompressor(zstd), frame.subarray(0, frame.byteLength - 3), 100)).rejects.toThrow('the zstd data ends inside a frame');
    await expect(through(zstdDecompressor(zstd), new TextEncoder().encode('not zstd at all'), 100)).rejects.toThrow('not a zstd frame');
  });
});
