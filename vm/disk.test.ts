import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { opfsSyncFile, SyncFileDisk, type SyncAccessHandleLike } from './disk.ts';
import { openNodeSyncFile } from './node-file.ts';

describe('SyncFileDisk', () => {
  it('reads and writes through to the file, tracking dirtiness', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'vm-disk-')), 'disk.img');
    const file = openNodeSyncFile(path);
    file.truncate(1 << 20);
    const disk = new SyncFileDisk(file);
    expect(disk.byteLength).toBe(1 << 20);
    let loaded = false;
    disk.onload = () => (loaded = true);
    disk.load();
    expect(loaded).toBe(true);
    expect(disk.dirty).toBe(false);
    let firstWrites = 0;
    disk.onFirstWrite = () => firstWrites++;
    let done = 0;
    disk.set(4096, new Uint8Array([1, 2, 3]), () => done++);
    disk.set(8192, new Uint8Array([4]), () => done++);
    expect(done).toBe(2);
    expect(disk.dirty).toBe(true);
    expect(firstWrites).toBe(1);
    disk.get(4095, 5, (bytes) => expect([...bytes]).toEqual([0, 1, 2, 3, 0]));
    disk.get_and_cache(8192, 1, (bytes) => expect([...bytes]).toEqual([4]));
    expect([...disk.get_from_cache(4096, 2)]).toEqual([1, 2]);
    expect(disk.get_state()).toEqual([]);
    disk.get_buffer((b) => expect(b).toBeUndefined());
    disk.flush();
    file.close();
    expect([...readFileSync(path).subarray(4096, 4099)]).toEqual([1, 2, 3]);
    disk.clearDirty();
    expect(disk.dirty).toBe(false);
  });

  it('adapts an OPFS-style sync access handle', () => {
    const data = new Uint8Array(16);
    const handle: SyncAccessHandleLike = {
      read: (buf, o) => (buf.set(data.subarray(o?.at ?? 0, (o?.at ?? 0) + buf.length)), Math.min(buf.length, 16 - (o?.at ?? 0))),
      write: (buf, o) => (data.set(buf, o?.at ?? 0), buf.length),
      flush: () => {},
      getSize: () => data.length,
      truncate: () => {},
      close: () => {},
    };
    const disk = new SyncFileDisk(opfsSyncFile(handle));
    disk.set(3, new Uint8Array([9, 9]), () => {});
    expect([...disk.get_from_cache(2, 4)]).toEqual([0, 9, 9, 0]);
    expect(disk.byteLength).toBe(16);
  });
});
