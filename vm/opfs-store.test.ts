// openOpfsMachine over a minimal OPFS fake whose files allow one sync access handle at a time,
// as OPFS does: a handle still held (by a worker being terminated) is waited for.
import { describe, expect, it } from 'vitest';
import type { SyncAccessHandleLike } from './disk.ts';
import { machineMeta, openOpfsMachine } from './opfs-store.ts';
import { PARTIAL_PREFIX } from '../storage/atomic-write.ts';

class ExclusiveFile {
  data = new Uint8Array(0);
  lastModified = Date.now();
  holders = 0;
  open(): SyncAccessHandleLike {
    if (this.holders > 0) throw new DOMException('Access Handles cannot be created if there is another open Access Handle', 'NoModificationAllowedError');
    this.holders++;
    let open = true;
    return {
      read: (buf, o) => {
        const part = this.data.subarray(o?.at ?? 0, (o?.at ?? 0) + buf.length);
        buf.set(part);
        return part.length;
      },
      write: (buf, o) => {
        const at = o?.at ?? 0;
        if (at + buf.length > this.data.length) {
          const next = new Uint8Array(at + buf.length);
          next.set(this.data);
          this.data = next;
        }
        this.data.set(buf, at);
        return buf.length;
      },
      flush: () => {},
      getSize: () => this.data.length,
      truncate: (n) => void (this.data = this.data.slice(0, n)),
      close: () => {
        if (open) this.holders--;
        open = false;
      },
    };
  }
}

class Dir {
  dirs = new Map<string, Dir>();
  files = new Map<string, ExclusiveFile>();
  async getDirectoryHandle(name: string) {
    if (!this.dirs.has(name)) this.dirs.set(name, new Dir());
    return this.dirs.get(name)!;
  }
  async getFileHandle(name: string) {
    if (!this.files.has(name)) this.files.set(name, new ExclusiveFile());
    const file = this.files.get(name)!;
    return { createSyncAccessHandle: async () => file.open() };
  }
  async removeEntry(name: string) {
    if (!this.files.delete(name)) throw new DOMException('missing', 'NotFoundError');
  }
  async *entries() {
    for (const [name, file] of this.files) yield [name, { kind: 'file', getFile: async () => ({ lastModified: file.lastModified }) }] as const;
  }
}

describe('machineMeta', () => {
  it('takes from machine.json only short strings or null: it may have come in a stack file', () => {
    expect(machineMeta({ imageHash: 'fd64fdc78ca0f2c7', state: 'g1', disk: 'g1' })).toEqual({ imageHash: 'fd64fdc78ca0f2c7', state: 'g1', disk: 'g1' });
    expect(machineMeta({ imageHash: 7, state: { toString: 'x' }, disk: 'x'.repeat(201) })).toEqual({ imageHash: null, state: null, disk: null });
    expect(machineMeta([1, 2])).toEqual({ imageHash: null, state: null, disk: null });
    expect(machineMeta(null)).toEqual({ imageHash: null, state: null, disk: null });
  });
});

describe('openOpfsMachine', () => {
  it('waits for a worker that still holds the machine files to let them go', async () => {
    const root = new Dir();
    const first = await openOpfsMachine(root as unknown as FileSystemDirectoryHandle, 's1');
    first.writeMeta({ imageHash: 'h', state: null, disk: null });
    setTimeout(() => first.close(), 300);
    const started = Date.now();
    const second = await openOpfsMachine(root as unknown as FileSystemDirectoryHandle, 's1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(second.readMeta().imageHash).toBe('h');
    second.close();
  });

  it("removes a saved state a killed tab left half-written, once it is too old to be another's", async () => {
    const root = new Dir();
    const vm = await (await (await (await root.getDirectoryHandle('stacks')).getDirectoryHandle('s1')).getDirectoryHandle('.os')).getDirectoryHandle('vm');
    await vm.getFileHandle(`${PARTIAL_PREFIX}old`);
    vm.files.get(`${PARTIAL_PREFIX}old`)!.lastModified = Date.now() - 11 * 60_000;
    await vm.getFileHandle(`${PARTIAL_PREFIX}new`);
    (await openOpfsMachine(root as unknown as FileSystemDirectoryHandle, 's1')).close();
    expect([...vm.files.keys()].filter((name) => name.startsWith(PARTIAL_PREFIX))).toEqual([`${PARTIAL_PREFIX}new`]);
  });

  it('gives up with the browser\'s own error when they stay held', async () => {
    const root = new Dir();
    const holder = await openOpfsMachine(root as unknown as FileSystemDirectoryHandle, 's1');
    await expect(openOpfsMachine(root as unknown as FileSystemDirectoryHandle, 's1', 200)).rejects.toMatchObject({ name: 'NoModificationAllowedError' });
    // Nothing is left half-open: once the holder lets go, the files open at once.
    holder.close();
    (await openOpfsMachine(root as unknown as FileSystemDirectoryHandle, 's1', 0)).close();
  });
});
