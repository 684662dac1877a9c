// A deflated entry (format version 1) unpacked a few KiB of its input at a time, each piece's
// output handed on and waited for before the next is unpacked: deflate grows at most 1,032 times,
// so a bomb costs a few MiB however much it claims, where the browser's own decoder unpacks each
// chunk it is given whole (256 KiB of input: up to 264 MB at once).
import { Inflate } from 'fflate';

const PIECE = 4096;

/** A sink for the entry's raw deflate bytes (zip.js `passThrough: 'compressed'`); `write` gets what they unpack to. */
export function inflating(write: (chunk: Uint8Array) => Promise<void> | void): WritableStream<Uint8Array> {
  let out: Uint8Array[] = [];
  const inflate = new Inflate((data) => {
    if (data.byteLength) out.push(data);
  });
  const drain = async () => {
    const ready = out;
    out = [];
    for (const part of ready) await write(part);
  };
  return new WritableStream<Uint8Array>({
    async write(chunk) {
      for (let at = 0; at < chunk.byteLength; at += PIECE) {
        inflate.push(chunk.subarray(at, at + PIECE));
        await drain();
      }
    },
    async close() {
      inflate.push(new Uint8Array(0), true);
      await drain();
    },
  });
}
