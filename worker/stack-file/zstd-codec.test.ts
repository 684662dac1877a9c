import { describe, expect, it } from 'vitest';
import { loadZstd } from '../zstd.ts';
import { FRAME_BYTES, frameAt, MAX_FRAME_LENGTH, zstdCompressor, zstdDecompressor, ZstdDataError, ZstdSizeError, zstdUnpacking } from './zstd-codec.ts';

/** Runs `bytes` through a stream in pieces of `piece` bytes and joins what comes out. */
async function through(stream: ReadableWritablePair<Uint8Array, Uint8Array>, bytes: Uint8Array, piece: number): Promise<Uint8Array> {
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

  it('unpacks a frame only when its reader asks: a chunk of a bomb is never unpacked whole', async () => {
    const zstd = await loadZstd();
    let unpacked = 0;
    const counting = { ...zstd, decompress: (bytes: Uint8Array) => (unpacked++, zstd.decompress(bytes)) } as typeof zstd;
    // 2,000 frames of a MiB of zeros: about 100 KB that declare 2 GiB, handed over as one chunk.
    const frame = zstd.compress(new Uint8Array(FRAME_BYTES), 1);
    const bomb = new Uint8Array(frame.byteLength * 2000);
    for (let at = 0; at < bomb.byteLength; at += frame.byteLength) bomb.set(frame, at);
    expect(bomb.byteLength).toBeLessThan(128_000);
    const stream = zstdDecompressor(counting);
    const writer = stream.writable.getWriter();
    const written = writer.write(bomb);
    written.catch(() => {});
    const reader = stream.readable.getReader();
    for (let read = 0; read < 3; read++) expect((await reader.read()).value!.byteLength).toBe(FRAME_BYTES);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // What was read, and at most the one frame the reader's next read will take.
    expect(unpacked).toBeLessThanOrEqual(4);
    await reader.cancel(new Error('enough'));
    await expect(written).rejects.toThrow('enough');
    expect(unpacked).toBeLessThanOrEqual(4);
  });

  it("refuses a frame that would take the output past the entry's declared size before unpacking it", async () => {
    const zstd = await loadZstd();
    let unpacked = 0;
    const counting = { ...zstd, decompress: (bytes: Uint8Array) => (unpacked++, zstd.decompress(bytes)) } as typeof zstd;
    const frame = zstd.compress(new Uint8Array(FRAME_BYTES), 1);
    const bomb = new Uint8Array(frame.byteLength * 1000);
    for (let at = 0; at < bomb.byteLength; at += frame.byteLength) bomb.set(frame, at);
    await expect(through(zstdDecompressor(counting, 3 * FRAME_BYTES + 10), bomb, bomb.byteLength)).rejects.toThrow(`the zstd data unpacks to more than the ${3 * FRAME_BYTES + 10} bytes declared`);
    expect(unpacked).toBe(3);
  });

  it('refuses a frame longer than a MiB can pack to before gathering it', async () => {
    const zstd = await loadZstd();
    // A frame declaring no content, then raw blocks of 128 KiB that never end: nothing this app writes.
    const block = new Uint8Array(3 + (128 << 10));
    block[0] = ((128 << 10) << 3) & 0xff;
    block[1] = (((128 << 10) << 3) >> 8) & 0xff;
    block[2] = (((128 << 10) << 3) >> 16) & 0xff;
    const parts = [new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0])];
    for (let at = 0; at * block.byteLength <= MAX_FRAME_LENGTH; at++) parts.push(block);
    const endless = new Uint8Array(await new Blob(parts as Uint8Array<ArrayBuffer>[]).arrayBuffer());
    await expect(through(zstdDecompressor(zstd), endless, 65536)).rejects.toThrow(`a zstd frame longer than ${MAX_FRAME_LENGTH} bytes`);
    const skippable = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0x40, 1, 2, 3]);
    await expect(through(zstdDecompressor(zstd), skippable, 4)).rejects.toThrow('a skippable zstd frame of');
  });
});

/** Hands `bytes` in pieces of `piece` to the importer's zstd sink; what its `write` was given, each copied. */
async function unpacked(zstd: Parameters<typeof zstdUnpacking>[0], bytes: Uint8Array, piece: number, limit = Infinity, onWrite?: () => void): Promise<Uint8Array[]> {
  const parts: Uint8Array[] = [];
  const writer = zstdUnpacking(zstd, limit, async (chunk) => {
    onWrite?.();
    parts.push(chunk.slice());
    await new Promise((resolve) => setTimeout(resolve, 0));
  }).writable.getWriter();
  for (let at = 0; at < bytes.byteLength; at += piece) await writer.write(bytes.slice(at, at + piece));
  await writer.close();
  return parts;
}

describe("the importer's zstd sink", () => {
  it('hands each frame on once the one before it was written, whatever pieces it is given', async () => {
    const zstd = await loadZstd();
    const original = sample(2 * FRAME_BYTES + 5);
    const packed = await through(zstdCompressor(zstd), original, 100_000);
    const skippable = new Uint8Array([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    let unpacking = 0;
    const counting = { ...zstd, decompress: (bytes: Uint8Array) => (unpacking++, zstd.decompress(bytes)) } as typeof zstd;
    let writes = 0;
    const parts = await unpacked(counting, new Uint8Array([...skippable, ...packed]), 7777, original.byteLength, () => expect(unpacking).toBe(++writes));
    expect(parts.map((part) => part.byteLength)).toEqual([FRAME_BYTES, FRAME_BYTES, 5]);
    expect(same(new Uint8Array(await new Blob(parts as Uint8Array<ArrayBuffer>[]).arrayBuffer()), original)).toBe(true);
  });

  it('refuses a frame past the declared size before unpacking it, and data that ends inside a frame', async () => {
    const zstd = await loadZstd();
    let unpacking = 0;
    const counting = { ...zstd, decompress: (bytes: Uint8Array) => (unpacking++, zstd.decompress(bytes)) } as typeof zstd;
    const frame = zstd.compress(new Uint8Array(FRAME_BYTES), 1);
    const bomb = new Uint8Array(frame.byteLength * 1000);
    for (let at = 0; at < bomb.byteLength; at += frame.byteLength) bomb.set(frame, at);
    await expect(unpacked(counting, bomb, bomb.byteLength, 3 * FRAME_BYTES + 10)).rejects.toThrow(ZstdSizeError);
    expect(unpacking).toBe(3);
    await expect(unpacked(zstd, frame.subarray(0, frame.byteLength - 3), 100)).rejects.toThrow('the zstd data ends inside a frame');
    await expect(unpacked(zstd, new TextEncoder().encode('not zstd at all'), 100)).rejects.toThrow('not a zstd frame');
  });
});
