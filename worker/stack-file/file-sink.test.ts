// The import's file sinks: through a sync access handle (a worker's path) with a fake handle that
// records what is done to it, and through a writable (the page's).
import { describe, expect, it } from 'vitest';
import { openFileSink } from './file-sink.ts';

function syncFile(options: { shortAt?: number; data?: Uint8Array } = {}) {
  const calls: string[] = [];
  let data = options.data ?? new Uint8Array(0);
  const handle = {
    write(bytes: Uint8Array, { at }: { at: number }) {
      calls.push(`write ${at} ${bytes.byteLength}`);
      const n = options.shortAt !== undefined && at + bytes.byteLength > options.shortAt ? Math.max(0, options.shortAt - at) : bytes.byteLength;
      if (at + n > data.byteLength) {
        const grown = new Uint8Array(at + n);
        grown.set(data);
        data = grown;
      }
      data.set(bytes.subarray(0, n), at);
      return n;
    },
    truncate(size: number) {
      calls.push(`truncate ${size}`);
      data = data.slice(0, size);
    },
    flush: () => calls.push('flush'),
    close: () => calls.push('close'),
  };
  const file = { createSyncAccessHandle: async () => handle, createWritable: async () => Promise.reject(new Error('a writable was used')) };
  return { file: file as unknown as FileSystemFileHandle, calls, data: () => data };
}

const bytes = (size: number, seed: number) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 255);
const MiB = 1 << 20;

describe('the import writing through a sync access handle', () => {
  it('writes a MiB straight from what it is given and gathers small pieces first, each at its place', async () => {
    const { file, calls, data } = syncFile({ data: bytes(3 * MiB, 9) });
    const sink = await openFileSink(file);
    const parts = [bytes(MiB, 1), bytes(1000, 2), bytes(2000, 3), bytes(MiB, 4), bytes(10, 5)];
    for (const part of parts) await sink.write(part);
    await sink.close();
    const size = parts.reduce((sum, part) => sum + part.byteLength, 0);
    // The file that was there is replaced whole: its longer tail is cut.
    expect(calls).toEqual([`write 0 ${MiB}`, `write ${MiB} 3000`, `write ${MiB + 3000} ${MiB}`, `write ${2 * MiB + 3000} 10`, `truncate ${size}`, 'flush', 'close']);
    expect(Buffer.from(data()).equals(Buffer.concat(parts))).toBe(true);
  });

  it('reports a short write as a full disk, and lets go of the file once when aborted', async () => {
    const { file, calls } = syncFile({ shortAt: 100 });
    const sink = await openFileSink(file);
    await expect(sink.write(bytes(MiB, 1))).rejects.toMatchObject({ name: 'QuotaExceededError' });
    await sink.abort();
    await sink.abort();
    expect(calls.filter((call) => call === 'close')).toHaveLength(1);
  });
});

describe('the import writing through a writable', () => {
  it('copies what it is given, so the caller may reuse it, and writes in batches', async () => {
    const written: Uint8Array[] = [];
    const file = { createWritable: async () => ({ write: async (chunk: Uint8Array) => void written.push(chunk), close: async () => {}, abort: async () => {} }) };
    const sink = await openFileSink(file as unknown as FileSystemFileHandle);
    const reused = bytes(MiB / 2, 1);
    await sink.write(reused);
    reused.fill(0);
    await sink.write(reused);
    await sink.close();
    expect(written.map((chunk) => chunk.byteLength)).toEqual([MiB]);
    expect(Buffer.from(written[0]!.subarray(0, MiB / 2)).equals(Buffer.from(bytes(MiB / 2, 1)))).toBe(true);
  });
});
