// How a checkpoint's new chunks are packed. zstd at level 1 (a WebAssembly build of the reference
// library, loaded on the first checkpoint) packs the computer's memory about four times as fast
// as deflate in JavaScript, to about the same size. Packs written before it hold deflated chunks,
// which are still read; if zstd cannot be loaded, new chunks are deflated as before.
import { deflateSync, inflateSync } from 'fflate';
import { loadZstd, type ZstdModule } from '../zstd.ts';

/** How a chunk lies in its pack: as it is, deflated (raw), or a zstd frame. */
export const STORED = 0;
export const DEFLATED = 1;
export const ZSTD = 2;
export type Packing = typeof STORED | typeof DEFLATED | typeof ZSTD;

export interface Packer {
  packing: typeof DEFLATED | typeof ZSTD;
  pack(bytes: Uint8Array): Uint8Array;
}

/** The decompressor a chunk needs could not be loaded: the checkpoint is whole, this page cannot read it now. */
export class CodecUnavailableError extends Error {
  override readonly name = 'CodecUnavailableError';
}

/** zstd when it loads, else deflate: a checkpoint is never refused for its compressor. */
export async function packer(): Promise<Packer> {
  try {
    const module = await loadZstd();
    return { packing: ZSTD, pack: (bytes) => module.compress(bytes, 1) };
  } catch (error) {
    console.warn('checkpoints: zstd could not be loaded, chunks are deflated instead', error);
    return { packing: DEFLATED, pack: (bytes) => deflateSync(bytes, { level: 1 }) };
  }
}

/** A chunk's bytes as they were, from how its pack holds them. */
export async function unpack(stored: Uint8Array, packing: Packing): Promise<Uint8Array> {
  if (packing === STORED) return stored;
  if (packing === DEFLATED) return inflateSync(stored);
  if (packing === ZSTD) {
    let module: ZstdModule;
    try {
      module = await loadZstd();
    } catch (cause) {
      throw new CodecUnavailableError('This checkpoint needs its decompressor (zstd), which could not be loaded; reload the page and try again.', { cause });
    }
    return module.decompress(stored);
  }
  throw new Error(`a checkpoint chunk is packed in an unknown way (${String(packing)})`);
}
