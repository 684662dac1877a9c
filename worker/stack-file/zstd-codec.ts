// zstd as a zip compression method (93, APPNOTE 4.4.5) for zip.js: an entry is a plain zstd stream
// of independent frames, one per MiB of the file, each declaring its content size. zstd at level 1
// packs a stack's disk and memory about seven times as fast as deflate, to a similar size, and
// unpacks at over 1 GB/s. The frames are cut apart by reading their own headers (RFC 8878), so a
// reader holds one frame at a time and refuses a frame that claims more than a MiB.
import { registerCodec } from '@zip.js/zip.js';
import { loadZstd, type ZstdModule } from '../zstd.ts';

export const ZSTD_METHOD = 93;
/** The bytes packed into one frame; a frame that declares more is refused. */
export const FRAME_BYTES = 1 << 20;
const LEVEL = 1;
const FRAME_MAGIC = 0xfd2fb528;
/** Skippable frames (magic 0x184D2A50–5F) are allowed by the format and skipped. */
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
/**
 * The longest a frame of at most FRAME_BYTES can pack to (zstd's compress bound, its header and
 * checksum with room to spare); a frame said to be longer is refused before it is gathered.
 */
export const MAX_FRAME_LENGTH = FRAME_BYTES + (FRAME_BYTES >> 8) + 1024;
/** This app writes no skippable frame; one that would have to be gathered past this is refused. */
const MAX_SKIPPABLE_LENGTH = 64 * 1024;

/** Bytes held in memory as the frames an entry's data is made of. */
export function packFrames(zstd: ZstdModule, bytes: Uint8Array): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let at = 0; at < bytes.byteLength; at += FRAME_BYTES) frames.push(zstd.compress(bytes.subarray(at, at + FRAME_BYTES), LEVEL));
  return frames;
}

export class ZstdDataError extends Error {
  override readonly name: string = 'ZstdDataError';
}

/** The frames go past the size the entry declares: a bomb, or a damaged file. */
export class ZstdSizeError extends ZstdDataError {
  override readonly name = 'ZstdSizeError';
}

/** A growing byte buffer read from its front. */
class Bytes {
  private buffer = new Uint8Array(0);
  private start = 0;
  private end = 0;

  get length(): number {
    return this.end - this.start;
  }

  push(chunk: Uint8Array): void {
    if (this.end + chunk.byteLength > this.buffer.byteLength) {
      const kept = this.buffer.subarray(this.start, this.end);
      const grown = this.length + chunk.byteLength > this.buffer.byteLength ? new Uint8Array(Math.max(this.length + chunk.byteLength, this.buffer.byteLength * 2)) : this.buffer;
      grown.set(kept, 0);
      this.buffer = grown;
      this.end = kept.byteLength;
      this.start = 0;
    }
    this.buffer.set(chunk, this.end);
    this.end += chunk.byteLength;
  }

  view(): Uint8Array {
    return this.buffer.subarray(this.start, this.end);
  }

  take(count: number): Uint8Array {
    const taken = this.buffer.subarray(this.start, this.start + count);
    this.start += count;
    if (this.start === this.end) this.start = this.end = 0;
    return taken;
  }
}

const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/**
 * The length of the frame at the start of `b` and the size of its content (null for a skippable
 * frame), or null while `b` does not hold the whole frame yet.
 */
export function frameAt(b: Uint8Array): { length: number; contentSize: number | null } | null {
  if (b.byteLength < 8) return null;
  const magic = u32(b, 0);
  if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
    const length = 8 + u32(b, 4);
    if (length > MAX_SKIPPABLE_LENGTH) throw new ZstdDataError(`a skippable zstd frame of ${length} bytes`);
    return b.byteLength >= length ? { length, contentSize: null } : null;
  }
  if (magic !== FRAME_MAGIC) throw new ZstdDataError('not a zstd frame');
  const descriptor = b[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const checksum = (descriptor >> 2) & 1;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const sizeBytes = sizeFlag === 0 ? singleSegment : [0, 2, 4, 8][sizeFlag]!;
  if (sizeBytes === 0) throw new ZstdDataError('a zstd frame without its content size');
  const sizeAt = 5 + (singleSegment ? 0 : 1) + dictionaryBytes;
  let at = sizeAt + sizeBytes;
  if (b.byteLength < at) return null;
  let contentSize: number;
  if (sizeBytes === 1) contentSize = b[sizeAt]!;
  else if (sizeBytes === 2) contentSize = (b[sizeAt]! | (b[sizeAt + 1]! << 8)) + 256;
  else if (sizeBytes === 4) contentSize = u32(b, sizeAt);
  else contentSize = u32(b, sizeAt + 4) === 0 ? u32(b, sizeAt) : Infinity;
  if (contentSize > FRAME_BYTES) throw new ZstdDataError(`a zstd frame of ${contentSize} bytes (at most ${FRAME_BYTES} are written)`);
  for (;;) {
    if (b.byteLength < at + 3) return null;
    const header = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    const type = (header >> 1) & 3;
    if (type === 3) throw new ZstdDataError('a zstd block of a reserved type');
    at += 3 + (type === 1 ? 1 : header >>> 3);
    if (at > MAX_FRAME_LENGTH) throw new ZstdDataError(`a zstd frame longer than ${MAX_FRAME_LENGTH} bytes`);
    if (header & 1) break;
  }
  at += checksum ? 4 : 0;
  return b.byteLength >= at ? { length: at, contentSize } : null;
}

/** Packs what it is given into frames of FRAME_BYTES. */
export function zstdCompressor(zstd: ZstdModule): TransformStream<Uint8Array, Uint8Array> {
  const pending = new Bytes();
  return new TransformStream({
    transform(chunk, controller) {
      pending.push(chunk);
      while (pending.length >= FRAME_BYTES) controller.enqueue(zstd.compress(pending.take(FRAME_BYTES), LEVEL));
    },
    flush(controller) {
      if (pending.length) controller.enqueue(zstd.compress(pending.take(pending.length), LEVEL));
    },
  }, undefined, { highWaterMark: 4 }); // packs a few frames ahead of their writing
}

/**
 * Unpacks frames one at a time, each only once its reader asks for more: the frames a chunk of a
 * few KB holds can declare GiBs between them, so none is unpacked ahead of demand, and a frame that
 * would take the output past `limit` (the size the entry declares) is refused before it is
 * unpacked. An incomplete last frame is an error.
 */
export function zstdDecompressor(zstd: ZstdModule, limit = Number.POSITIVE_INFINITY): ReadableWritablePair<Uint8Array, Uint8Array> {
  const pending = new Bytes();
  let produced = 0;
  let output!: ReadableStreamDefaultController<Uint8Array>;
  let asked = false;
  let wake: (() => void) | null = null;
  let cancelled: unknown = null;
  const demand = () => {
    asked = true;
    wake?.();
    wake = null;
  };
  const readable = new ReadableStream<Uint8Array>(
    {
      start: (controller) => void (output = controller),
      pull: demand,
      cancel(reason) {
        cancelled = reason ?? new ZstdDataError('the reader stopped');
        demand();
      },
    },
    { highWaterMark: 0 },
  );
  const fail = (error: unknown): never => {
    if (cancelled === null) output.error(error);
    throw error;
  };
  const writable = new WritableStream<Uint8Array>({
    async write(chunk) {
      try {
        pending.push(chunk);
        for (let frame = frameAt(pending.view()); frame; frame = frameAt(pending.view())) {
          if (frame.contentSize === null) {
            pending.take(frame.length);
            continue;
          }
          if (produced + frame.contentSize > limit) throw new ZstdSizeError(`the zstd data unpacks to more than the ${limit} bytes declared`);
          if (!asked) await new Promise<void>((resolve) => (wake = resolve));
          if (cancelled !== null) throw cancelled;
          const bytes = pending.take(frame.length);
          const content = frame.contentSize === 0 ? new Uint8Array(0) : zstd.decompress(bytes);
          if (content.byteLength !== frame.contentSize) throw new ZstdDataError('a zstd frame unpacked to another size than it declares');
          produced += content.byteLength;
          asked = false;
          output.enqueue(content);
        }
      } catch (error) {
        fail(error);
      }
    },
    close() {
      if (pending.length) fail(new ZstdDataError('the zstd data ends inside a frame'));
      if (cancelled === null) output.close();
    },
    abort(reason) {
      if (cancelled === null) output.error(reason);
    },
  });
  return { readable, writable };
}

/**
 * A sink for an entry's raw zstd bytes (zip.js `passThrough: 'compressed'`), as the importer reads
 * them: each frame is unpacked only once the one before it went through `write`, a frame that
 * would take the output past `limit` is refused before it is unpacked, and each frame's output is
 * freed as soon as `write` is done with it (`write` must not keep it). Left to the garbage
 * collector, a GiB unpacked MiB by MiB kept the worker 60-300 MB larger (measured in Chromium).
 * `failure()` is the first error the stream failed with: its writer may report another (zip.js
 * does, closing the stream it broke).
 */
export function zstdUnpacking(zstd: ZstdModule, limit: number, write: (chunk: Uint8Array) => Promise<void> | void): { writable: WritableStream<Uint8Array>; failure(): unknown } {
  const pending = new Bytes();
  let produced = 0;
  let failure: unknown = null;
  const unpack = async (chunk: Uint8Array) => {
    pending.push(chunk);
    for (let frame = frameAt(pending.view()); frame; frame = frameAt(pending.view())) {
      const bytes = pending.take(frame.length);
      if (!frame.contentSize) continue; // skippable, or empty
      if (produced + frame.contentSize > limit) throw new ZstdSizeError(`the zstd data unpacks to more than the ${limit} bytes declared`);
      const content = zstd.decompress(bytes);
      if (content.byteLength !== frame.contentSize) throw new ZstdDataError('a zstd frame unpacked to another size than it declares');
      produced += content.byteLength;
      try {
        await write(content);
      } finally {
        release(content);
      }
    }
  };
  const failed = (error: unknown): never => {
    failure ??= error;
    throw error;
  };
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => unpack(chunk).catch(failed),
    close() {
      if (pending.length) failed(new ZstdDataError('the zstd data ends inside a frame'));
    },
  });
  return { writable, failure: () => failure };
}

/** Frees the memory of bytes nothing else refers to now (a detached buffer's is freed at once), where the engine can. */
function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer & { transfer?(length: number): ArrayBuffer };
  if (bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) buffer.transfer?.(0);
}

let registered: Promise<void> | null = null;

/** Loads zstd and registers it with zip.js as method 93 (once per worker). */
export function registerZstd(): Promise<void> {
  registered ??= loadZstd().then((zstd) => {
    // zip.js constructs these with (format, options); a class built on TransformStream.
    class Compression {
      readonly readable: ReadableStream<Uint8Array>;
      readonly writable: WritableStream<Uint8Array>;
      constructor() {
        ({ readable: this.readable, writable: this.writable } = zstdCompressor(zstd));
      }
    }
    class Decompression {
      readonly readable: ReadableStream<Uint8Array>;
      readonly writable: WritableStream<Uint8Array>;
      /** zip.js passes the entry's declared size: nothing past it is unpacked. */
      constructor(_format: string, options?: { uncompressedSize?: number }) {
        const limit = typeof options?.uncompressedSize === 'number' ? options.uncompressedSize : undefined;
        ({ readable: this.readable, writable: this.writable } = zstdDecompressor(zstd, limit));
      }
    }
    registerCodec({
      compressionMethod: ZSTD_METHOD,
      format: 'zstd',
      CompressionStream: Compression as never,
      DecompressionStream: Decompression as never,
      versionNeeded: 63,
    });
  });
  registered.catch(() => (registered = null));
  return registered;
}
