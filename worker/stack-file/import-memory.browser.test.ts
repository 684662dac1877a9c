// The importer's cost to Chromium's renderers (their resident memory, read from /proc by a
// vitest command) while it imports into real OPFS: a file of frames worth 20 GiB that declares
// 1 MiB, a stack that declares 1 GiB honestly, and a plain 64 MiB stack.
import { commands } from 'vitest/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StackFolders } from '../stack-folders.ts';
import { foldersIn } from './test-folders.ts';
import { HOSTILE_IMAGE, honestBomb, hostileStacks, plainStackFile } from '../../tests/fixtures/hostile-stacks.ts';

declare module 'vitest/browser' {
  interface BrowserCommands {
    rendererMemoryMb(): Promise<number>;
  }
}

let area = '';
let folders: StackFolders;

async function stacksDir() {
  return (await navigator.storage.getDirectory()).getDirectoryHandle(area, { create: true });
}

/** The renderers' resident MB above where they were when `work` started, at its peak (sampled every 25 ms). */
async function peakAbove(work: () => Promise<unknown>): Promise<{ outcome: string; peakMb: number; seconds: number }> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  const before = await commands.rendererMemoryMb();
  let peak = before;
  let done = false;
  const started = performance.now();
  const running = work().then(
    () => 'imported',
    (error: Error) => error.message,
  ).finally(() => (done = true));
  while (!done) {
    peak = Math.max(peak, await commands.rendererMemoryMb());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  peak = Math.max(peak, await commands.rendererMemoryMb());
  return { outcome: await running, peakMb: peak - before, seconds: (performance.now() - started) / 1000 };
}

/** The file as the page gets it from a picker: made before the measuring starts. */
const fileOf = (bytes: Uint8Array) => new Blob([bytes as Uint8Array<ArrayBuffer>]);
const importOf = (file: Blob) => folders.importStack(file, { appImage: HOSTILE_IMAGE, signal: new AbortController().signal });

beforeAll(async () => {
  area = `import-memory-${crypto.randomUUID().slice(0, 8)}`;
  folders = foldersIn(area, stacksDir, { estimate: async () => ({ usage: 0, quota: 100e9 }), idPrefix: 's-memory' });
});

afterAll(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

describe("the importer's memory in Chromium", () => {
  it('refuses a 1 MB file of frames worth 20 GiB, declared as 1 MiB, costing the renderers little', async () => {
    const bomb = fileOf((await hostileStacks()).find((stack) => stack.name === 'zstd-bomb-big')!.bytes);
    const { outcome, peakMb, seconds } = await peakAbove(() => importOf(bomb));
    console.log(`stack.import_peak_mb ${peakMb.toFixed(1)} MB above the start (renderers, Chromium), a 20 GiB bomb declaring 1 MiB, refused in ${seconds.toFixed(1)} s`);
    expect(outcome).toContain('unpacks to more than the 1048576 bytes its manifest declares');
    expect(peakMb).toBeLessThan(64);
  }, 60_000);

  it('unpacks a stack that declares 1 GiB honestly into OPFS, and a plain 64 MiB one, their memory flat', async () => {
    for (const [what, bytes] of [
      ['a 1 GiB-declaring bomb', fileOf(await honestBomb(1024))],
      ['a plain 64 MiB stack', fileOf(await plainStackFile(64))],
    ] as const) {
      const { outcome, peakMb, seconds } = await peakAbove(() => importOf(bytes));
      console.log(`stack.import_peak_mb ${peakMb.toFixed(1)} MB above the start (renderers, Chromium), ${what}, imported in ${seconds.toFixed(1)} s`);
      expect(outcome).toBe('imported');
      // Seen: 0 MB for the bomb, 56 MB for the plain stack (not yet understood where that goes).
      // The bound leaves room for test files running beside this one in the same renderer; a
      // bomb unpacked ahead of its writing (1 GB and more) could never keep to it.
      expect(peakMb).toBeLessThan(256);
    }
  }, 180_000);
});
