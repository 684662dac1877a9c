import { createCRC32 } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { crc32Combine } from './crc32-combine.ts';

async function crc32(bytes: Uint8Array): Promise<number> {
  const crc = await createCRC32();
  crc.init();
  crc.update(bytes);
  return parseInt(crc.digest('hex'), 16);
}

describe('crc32Combine', () => {
  it('gives the CRC-32 of two pieces laid end to end, whatever their lengths', async () => {
    const data = new Uint8Array(3 * 2 ** 20 + 12_345);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
    const whole = await crc32(data);
    for (const cut of [0, 1, 7, 1 << 20, 2 * 2 ** 20 + 3, data.length - 1, data.length]) {
      const a = data.subarray(0, cut);
      const b = data.subarray(cut);
      expect(crc32Combine(await crc32(a), await crc32(b), b.length), `cut at ${cut}`).toBe(whole);
    }
  });

  it('is not fooled by a piece of zeros (the length counts, not only the CRC)', async () => {
    const a = new TextEncoder().encode('stackdocs');
    const zeros = new Uint8Array(1000);
    expect(crc32Combine(await crc32(a), await crc32(zeros), zeros.length)).toBe(await crc32(new Uint8Array([...a, ...zeros])));
    expect(crc32Combine(await crc32(a), await crc32(zeros), zeros.length)).not.toBe(crc32Combine(await crc32(a), await crc32(zeros.subarray(1)), 999));
  });
});
