// The CRC-32 (zip's, the reflected polynomial 0xedb88320) of some bytes (hash-wasm's), and of two
// pieces of data laid end to end from the CRC-32 of each and the second one's length, as zlib's
// crc32_combine works it out: a file's halves are checked on two threads and the zip entry gets
// the whole file's CRC.
import { createCRC32 } from 'hash-wasm';

export async function crc32Of(bytes: Uint8Array): Promise<number> {
  const crc = await createCRC32();
  crc.init();
  crc.update(bytes);
  return parseInt(crc.digest('hex'), 16);
}

const POLY = 0xedb88320;

/** a(x)·b(x) modulo the CRC polynomial, both reflected. */
function multmodp(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, for k = 0…31. */
const X2N = (() => {
  const table = new Uint32Array(32);
  let p = 0x40000000; // x^1
  table[0] = p;
  for (let k = 1; k < 32; k++) table[k] = p = multmodp(p, p);
  return table;
})();

/** x^(n·2^k) modulo the polynomial. */
function x2nmodp(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multmodp(X2N[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A then B, from crc(A), crc(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multmodp(x2nmodp(lengthB, 3), crcA) ^ crcB) >>> 0;
}
