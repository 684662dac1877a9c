// The importer's memory, measured in Node (where the process's own figures can be read) over a
// folder that counts what is written and keeps nothing: bombs that lie about their size and one
// that declares 1 GiB honestly stay within a few MiB of the process's size before the import.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importStackFile } from './import.ts';
import { StackFileError } from './format.ts';
import { HOSTILE_IMAGE, honestBomb, hostileStacks, plainStackFile, type HostileStack } from '../../tests/fixtures/hostile-stacks.ts';

const MB = 1e6;

/** A folder that counts the bytes written into it and keeps only small files (a journal, to be read back). */
function countingFolder(written: { bytes: number; quota?: number } = { bytes: 0 }): FileSystemDirectoryHandle {
  const folders = new Map<string, FileSystemDirectoryHandle>();
  const files = new Map<string, Uint8Array>();
  return {
    kind: 'directory',
    async getDirectoryHandle(name: string) {
      if (!folders.has(name)) folders.set(name, countingFolder(written));
      return folders.get(name)!;
    },
    async getFileHandle(name: string, options?: { create?: boolean }) {
      if (!files.has(name) && !options?.create) throw new DOMException(name, 'NotFoundError');
      if (!files.has(name)) files.set(name, new Uint8Array(0));
      return {
        kind: 'file',
        getFile: async () => new Blob([files.get(name)! as Uint8Array<ArrayBuffer>]),
        async createWritable() {
          const kept: Uint8Array[] = [];
          let size = 0;
          return {
            async write(bytes: Uint8Array) {
              if (written.quota !== undefined && written.bytes + bytes.byteLength > written.quota) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
              written.bytes += bytes.byteLength;
              size += bytes.byteLength;
              if (size <= 1 << 20) kept.push(bytes.slice());
            },
            close: async () => void files.set(name, new Uint8Array(await new Blob(kept as Uint8Array<ArrayBuffer>[]).arrayBuffer())),
            abort: async () => {},
          };
        },
      };
    },
  } as unknown as FileSystemDirectoryHandle;
}

/** Runs `work`, sampling the process's resident size every few ms: the peak above where it started, in MB. */
async function peakAbove<T>(work: () => Promise<T>): Promise<{ value: T | Error; peakMb: number }> {
  globalThis.gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  const timer = setInterval(sample, 2);
  try {
    const value = await work().catch((error: Error) => error);
    sample();
    return { value, peakMb: (peak - before) / MB };
  } finally {
    clearInterval(timer);
  }
}

const importOf = (bytes: Uint8Array, written: { bytes: number; quota?: number } = { bytes: 0 }, estimate = { usage: 0, quota: 100e9 }) =>
  importStackFile({ file: new Blob([bytes as Uint8Array<ArrayBuffer>]), target: countingFolder(written), appImage: HOSTILE_IMAGE, estimate, signal: new AbortController().signal });

let corpus: HostileStack[] = [];
const hostile = (name: string) => corpus.find((stack) => stack.name === name)!.bytes;

beforeAll(async () => {
  corpus = await hostileStacks();
}, 30_000);

afterEach(() => globalThis.gc?.());

describe('the importer\'s memory', () => {
  it('opens a plain stack file from the corpus\'s writer (its control)', async () => {
    const imported = await importOf(await plainStackFile());
    expect(imported.manifest.stack.name).toBe('Hostile');
    expect(imported.layout).toBe('{"version":1}');
  });

  it('refuses a 1 MB file of frames that unpack to 20 GiB, declared as 1 MiB, within a few MiB and a second', async () => {
    const started = performance.now();
    const { value, peakMb } = await peakAbove(() => importOf(hostile('zstd-bomb-big')));
    expect(value).toBeInstanceOf(StackFileError);
    expect((value as Error).message).toBe(`This stack file is refused: "stack/.os/vm/state.bin" unpacks to more than the ${1 << 20} bytes its manifest declares.`);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(peakMb).toBeLessThan(64);
  });

  it('refuses format 1\'s 200 MiB deflate bomb declared as 10 bytes within a few MiB', async () => {
    const { value, peakMb } = await peakAbove(() => importOf(hostile('deflate-bomb')));
    expect((value as Error).message).toBe('This stack file is refused: "stack/documents/bomb.bin" unpacks to more than the 10 bytes its manifest declares.');
    expect(peakMb).toBeLessThan(64);
  });

  it('unpacks a stack that declares 1 GiB honestly a MiB at a time, its memory flat, when the room allows it', async () => {
    const bytes = await honestBomb(1024);
    const written = { bytes: 0 };
    const started = performance.now();
    const { value, peakMb } = await peakAbove(() => importOf(bytes, written));
    expect(value).not.toBeInstanceOf(Error);
    expect(written.bytes).toBeGreaterThanOrEqual(1024 * 2 ** 20);
    console.log(`stack.import_peak_mb ${peakMb.toFixed(1)} MB above the start, 1 GiB-declaring bomb (${(bytes.byteLength / MB).toFixed(2)} MB file) written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    expect(peakMb).toBeLessThan(64);
  }, 60_000);

  it('imports a plain stack of 64 MiB that does not pack within a few MiB of the file itself', async () => {
    const bytes = await plainStackFile(64);
    const written = { bytes: 0 };
    const { value, peakMb } = await peakAbove(() => importOf(bytes, written));
    expect(value).not.toBeInstanceOf(Error);
    expect(written.bytes).toBeGreaterThan(64 * 2 ** 20);
    console.log(`stack.import_peak_mb ${peakMb.toFixed(1)} MB above the start, a plain 64 MiB stack`);
    expect(peakMb).toBeLessThan(64);
  }, 60_000);

  it('says the storage is full, not that the file is damaged, when the browser refuses a write midway', async () => {
    // A browser whose estimate says more room than its quota then grants (a lowered quota, another tab writing).
    const value = await importOf(await honestBomb(64), { bytes: 0, quota: 16 * 2 ** 20 }).catch((error: unknown) => error);
    expect(value).toBeInstanceOf(DOMException);
    expect((value as DOMException).name).toBe('QuotaExceededError');
  });

  it('refuses the same 1 GiB before unpacking anything when it is over the ceiling', async () => {
    const written = { bytes: 0 };
    const { value, peakMb } = await peakAbove(() => importOf(hostile('honest-gib-ceiling'), written, { usage: 1e9, quota: 2.5e9 }));
    expect((value as StackFileError).code).toBe('too_large');
    expect(written.bytes).toBe(0);
    expect(peakMb).toBeLessThan(16);
  });
});
