// writeBytes through a sync access handle (a worker's path; the page's, through a writable, is in
// vm/workspace-writes.browser.test.ts, which runs where there are no sync handles).
import { describe, expect, it } from 'vitest';
import { writeBytes } from './atomic-write.ts';

/** A file handle with a sync access handle that records what is done to it. */
function syncFile(options: { shortAt?: number } = {}) {
  const calls: string[] = [];
  let data = new Uint8Array(0);
  const handle = {
    truncate(size: number) {
      calls.push(`truncate ${size}`);
      const next = new Uint8Array(size);
      next.set(data.subarray(0, size));
      data = next;
    },
    write(bytes: Uint8Array, { at }: { at: number }) {
      calls.push(`write ${at} ${bytes.byteLength}`);
      const n = options.shortAt !== undefined && at + bytes.byteLength > options.shortAt ? Math.max(0, options.shortAt - at) : bytes.byteLength;
      data.set(bytes.subarray(0, n), at);
      return n;
    },
    flush: () => calls.push('flush'),
    close: () => calls.push('close'),
  };
  const file = { createSyncAccessHandle: async () => handle, createWritable: async () => Promise.reject(new Error('a writable was used')) };
  return { file: file as unknown as FileSystemFileHandle, calls, data: () => data };
}

describe('writeBytes with a sync access handle', () => {
  it('reserves the whole size first, then writes slice by slice, letting other work in between', async () => {
    const { file, calls, data } = syncFile();
    const bytes = new Uint8Array(5 * 2 ** 20 + 3).map((_, i) => i % 251);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      await writeBytes(file, bytes);
    } finally {
      clearInterval(timer);
    }
    expect(calls).toEqual([`truncate ${bytes.byteLength}`, `write 0 ${2 ** 21}`, `write ${2 ** 21} ${2 ** 21}`, `write ${2 ** 22} ${2 ** 20 + 3}`, 'flush', 'close']);
    expect(Buffer.from(data()).equals(Buffer.from(bytes))).toBe(true);
    expect(ticks).toBeGreaterThan(0);
  });

  it('fails on a short write, and closes the handle all the same', async () => {
    const { file, calls } = syncFile({ shortAt: 3 * 2 ** 20 });
    await expect(writeBytes(file, new Uint8Array(4 * 2 ** 20))).rejects.toThrow(`only ${3 * 2 ** 20} of ${4 * 2 ** 20} bytes were written`);
    expect(calls.at(-1)).toBe('close');
    expect(calls).not.toContain('flush');
  });

  it('writes an empty file', async () => {
    const { file, calls } = syncFile();
    await writeBytes(file, new Uint8Array(0));
    expect(calls).toEqual(['truncate 0', 'flush', 'close']);
  });
});
