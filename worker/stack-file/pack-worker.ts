// A second packer for `.stack` files (export.ts): the export's own thread packs the first part of
// a large file while this one packs the rest into zstd frames, with its CRC-32, and works out the
// whole file's SHA-256 (the browser's own, on yet another thread).
import * as Comlink from 'comlink';
import { sha256Hex } from '../../storage/hash.ts';
import { loadZstd } from '../zstd.ts';
import { crc32Of } from './crc32-combine.ts';
import { packFrames } from './zstd-codec.ts';

export interface PackedPart {
  /** The zstd frames of the file from `from` on. */
  frames: Uint8Array[];
  /** The CRC-32 of the file from `from` on. */
  crc32: number;
  /** The whole file's. */
  sha256: string;
}

const api = {
  async packFrom(file: Blob, from: number): Promise<PackedPart> {
    const zstd = await loadZstd();
    const whole = new Uint8Array(await file.arrayBuffer());
    const digest = sha256Hex(whole);
    const part = whole.subarray(from);
    const crc32 = await crc32Of(part);
    const frames = packFrames(zstd, part);
    const packed: PackedPart = { frames, crc32, sha256: await digest };
    return Comlink.transfer(packed, frames.map((frame) => frame.buffer as ArrayBuffer));
  },
};

export type PackApi = typeof api;

Comlink.expose(api);
