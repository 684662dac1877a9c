// Whole-file writes into OPFS in real Chromium: a reader sees the old file or the new one, never a
// new empty one while the bytes are on their way, and a failed write leaves nothing behind.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cdp } from 'vitest/browser';
import { isPartialWrite, PARTIAL_PREFIX, sweepPartialWrites, writeWholeFile } from '../storage/atomic-write.ts';
import { opfsWorkspaceFs } from './opfs-workspace-fs.ts';

let dir: FileSystemDirectoryHandle;
const folderName = `workspace-writes-${crypto.randomUUID()}`;

async function names(of = dir): Promise<string[]> {
  const found: string[] = [];
  for await (const name of (of as unknown as { keys(): AsyncIterable<string> }).keys()) found.push(name);
  return found.sort();
}

async function text(name: string): Promise<string> {
  return (await (await dir.getFileHandle(name)).getFile()).text();
}

beforeEach(async () => {
  dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(folderName, { create: true });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await cdp().send('Storage.overrideQuotaForOrigin', { origin: location.origin });
  await (await navigator.storage.getDirectory()).removeEntry(folderName, { recursive: true }).catch(() => {});
});

describe('writeWholeFile', () => {
  it('creates a file, then replaces it, leaving no partial file', async () => {
    await writeWholeFile(dir, 'a.txt', new TextEncoder().encode('first'));
    const handle = await writeWholeFile(dir, 'a.txt', new TextEncoder().encode('second, longer'));
    expect(await (await handle.getFile()).text()).toBe('second, longer');
    expect(await names()).toEqual(['a.txt']);
  });

  it('shows no file under the name while a new file is being written, and none after the write fails', async () => {
    const seenDuringWrite: string[][] = [];
    const real = FileSystemFileHandle.prototype.createWritable;
    vi.spyOn(FileSystemFileHandle.prototype, 'createWritable').mockImplementation(async function (this: FileSystemFileHandle, options) {
      const writable = await real.call(this, options);
      return Object.assign(writable, {
        write: async () => {
          seenDuringWrite.push(await names());
          throw new DOMException('Failed to write data to data pipe', 'InvalidStateError');
        },
      });
    });
    await expect(writeWholeFile(dir, 'new.bin', new Uint8Array(1000))).rejects.toThrow('data pipe');
    expect(seenDuringWrite).toHaveLength(1);
    expect(seenDuringWrite[0]!.filter((name) => !isPartialWrite(name))).toEqual([]);
    expect(await names()).toEqual([]);
  });

  it('refuses a file that does not fit before it takes any room, so the small writes beside it still land', async () => {
    const { usage = 0 } = await navigator.storage.estimate();
    await cdp().send('Storage.overrideQuotaForOrigin', { origin: location.origin, quotaSize: usage + 512 * 1024 });
    const [big, small] = await Promise.allSettled([
      writeWholeFile(dir, 'big.bin', new Uint8Array(3_000_000)),
      writeWholeFile(dir, 'small.txt', new Uint8Array(64 * 1024).fill(65)),
    ]);
    expect(big.status === 'rejected' && (big.reason as DOMException).name).toBe('QuotaExceededError');
    expect(small.status).toBe('fulfilled');
    expect(await names()).toEqual(['small.txt']);
  });

  it('keeps the old bytes when a replacement fails', async () => {
    await writeWholeFile(dir, 'kept.txt', new TextEncoder().encode('old bytes'));
    const real = FileSystemFileHandle.prototype.createWritable;
    vi.spyOn(FileSystemFileHandle.prototype, 'createWritable').mockImplementation(async function (this: FileSystemFileHandle, options) {
      const writable = await real.call(this, options);
      return Object.assign(writable, { close: () => Promise.reject(new DOMException('The write was cut short', 'AbortError')) });
    });
    await expect(writeWholeFile(dir, 'kept.txt', new TextEncoder().encode('new bytes'))).rejects.toThrow('cut short');
    expect(await text('kept.txt')).toBe('old bytes');
    expect(await names()).toEqual(['kept.txt']);
  });
});

describe('partial files a killed tab left', () => {
  async function leavePartial(name = `${PARTIAL_PREFIX}left`, into = dir) {
    const writable = await (await into.getFileHandle(name, { create: true })).createWritable();
    await writable.write('half a fi');
    await writable.close();
  }

  it('are swept once old enough, not while another writer may still be at it', async () => {
    await leavePartial();
    await writeWholeFile(dir, 'real.txt', new TextEncoder().encode('whole'));
    expect(await sweepPartialWrites(dir)).toBe(0);
    expect(await sweepPartialWrites(dir, 10 * 60_000, Date.now() + 11 * 60_000)).toBe(1);
    expect(await names()).toEqual(['real.txt']);
  });

  it('are not shown to the computer as files of /workspace', async () => {
    const artifacts = await dir.getDirectoryHandle('artifacts', { create: true });
    await leavePartial(`${PARTIAL_PREFIX}big`, artifacts);
    await writeWholeFile(artifacts, 'done.csv', new TextEncoder().encode('a,b\n'));
    const fs = opfsWorkspaceFs(dir);
    expect(await fs.list('')).toEqual([{ name: 'artifacts', kind: 'dir' }]);
    expect(await fs.list('artifacts')).toEqual([{ name: 'done.csv', kind: 'file' }]);
  });
});
