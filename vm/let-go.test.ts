import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { V86 } from 'v86';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncFileDisk } from './disk.ts';
import { emulatorOptions } from './emulator-options.ts';
import { freshMemoryRestore } from './fresh-memory.ts';
import { unpackSavedState, type ImageManifest } from './image.ts';
import { letGo, letGoOfCopies, v86Cpu, type V86MemoryCopies } from './let-go.ts';
import { nodeV86Wasm, openNodeSyncFile } from './node-file.ts';
import { useArrayBufferTransfer } from './testing/test-transfer.ts';
import { Workspace9p } from './workspace-9p.ts';
import { emptyWorkspaceFs } from './workspace-fs.ts';
import { V86_WASM_PATH } from './testing/v86-emulator.ts';

useArrayBufferTransfer();

describe('letGoOfCopies', () => {
  it("detaches a save's packed copy once the save's synchronous call is done, and a restore's once unpacked", async () => {
    let unpacked: number[] = [];
    const cpu: V86MemoryCopies = {
      pack_memory: () => ({ bitmap: null, packed_memory: new Uint8Array(8192).fill(1) }),
      unpack_memory: (_bitmap, packed) => void (unpacked = [...packed.subarray(0, 2)]),
    };
    letGoOfCopies(cpu);
    letGoOfCopies(cpu); // once is enough: nothing wrapped twice
    const { packed_memory } = cpu.pack_memory();
    // Still whole for the rest of the save (v86 copies it into the state in the same call).
    expect(packed_memory.byteLength).toBe(8192);
    await Promise.resolve();
    expect(packed_memory.buffer.byteLength).toBe(0);

    const state = new Uint8Array(4096).fill(7);
    cpu.unpack_memory(null, state);
    expect(unpacked).toEqual([7, 7]);
    expect(state.buffer.byteLength).toBe(0);
  });

  it('finds the CPU of a real emulator only', () => {
    expect(v86Cpu({})).toBeNull();
    expect(v86Cpu({ v86: { cpu: { pack_memory: () => null } } })).toBeNull();
    const cpu = { pack_memory: () => null, unpack_memory: () => {} };
    expect(v86Cpu({ v86: { cpu } })).toBe(cpu);
  });

  it('letGo drops nothing where transfer is missing', () => {
    delete (ArrayBuffer.prototype as { transfer?: unknown }).transfer;
    const buffer = new ArrayBuffer(16);
    letGo(buffer);
    expect(buffer.byteLength).toBe(16);
  });
});

const IMAGE_DIR = join(import.meta.dirname, '..', 'vm-images', 'out', 'latest');
const MANIFEST = join(IMAGE_DIR, 'manifest.json');
const pristine = existsSync(MANIFEST) ? (JSON.parse(readFileSync(MANIFEST, 'utf8')) as ImageManifest).pristineState : undefined;

interface RealEmulator {
  add_listener(event: string, listener: () => void): void;
  destroy(): Promise<void>;
  save_state(): Promise<ArrayBuffer>;
  v86: { cpu: V86MemoryCopies & { mem8: Uint8Array; memory_size: Uint32Array } };
}

describe.skipIf(!pristine || process.env.STACKDOCS_SKIP_VM_BOOT === '1')("v86's copies in a real restore and save", () => {
  const dir = mkdtempSync(join(tmpdir(), 'vm-let-go-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Restores `state` without running it (its copies let go of when `release`); returns the guest
   * RAM's hash, the copies v86 made (detached or not) and the emulator.
   */
  async function restore(state: ArrayBuffer, release: boolean) {
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as ImageManifest;
    openNodeSyncFile(join(dir, 'disk.img')).truncate(manifest.disk.size);
    const read = (name: string) => new Uint8Array(readFileSync(join(IMAGE_DIR, name))).buffer;
    const files = { bios: read('bios.bin'), vgaBios: read('vgabios.bin'), memoryMiB: manifest.memoryMiB };
    const copies: Uint8Array<ArrayBuffer>[] = [];
    let emulator!: RealEmulator;
    // The same shape as the machine's own loadable state: v86's CPU exists when it is loaded.
    const initial = {
      buffer: state,
      onload: undefined as ((event: { buffer: ArrayBuffer }) => void) | undefined,
      load() {
        const cpu = v86Cpu(emulator)!;
        // What v86 makes, seen under the wrapper: a save's packed RAM, a restore's.
        const { pack_memory: pack, unpack_memory: unpack } = cpu;
        cpu.pack_memory = function (this: V86MemoryCopies) {
          const packed = pack.call(this);
          copies.push(packed.packed_memory);
          return packed;
        };
        cpu.unpack_memory = function (this: V86MemoryCopies, bitmap, packed) {
          copies.push(packed);
          unpack.call(this, bitmap, packed);
        };
        if (release) letGoOfCopies(cpu);
        this.onload?.({ buffer: this.buffer });
      },
      get(start: number, length: number, done: (bytes: Uint8Array) => void) {
        done(new Uint8Array(this.buffer, start, length));
      },
      set() {},
    };
    emulator = new V86({
      ...emulatorOptions(files, new SyncFileDisk(openNodeSyncFile(join(dir, 'disk.img')), manifest.disk.size), V86_WASM_PATH, null, new Workspace9p(emptyWorkspaceFs()).handle),
      wasm_fn: freshMemoryRestore(nodeV86Wasm(V86_WASM_PATH)),
      initial_state: initial,
      autostart: false,
    } as never) as unknown as RealEmulator;
    await new Promise<void>((resolve) => emulator.add_listener('emulator-loaded', resolve));
    const { cpu } = emulator.v86;
    const ram = () => createHash('sha256').update(cpu.mem8.subarray(0, cpu.memory_size[0])).digest('hex');
    return { emulator, copies, ram };
  }

  it('restores and saves the same guest RAM with each copy detached once used', { timeout: 180_000 }, async () => {
    const packed = unpackSavedState(readFileSync(join(IMAGE_DIR, pristine!.file)), pristine!.size);
    const state = () => packed.slice().buffer;

    const plain = await restore(state(), false);
    const expected = plain.ram();
    expect(plain.copies).toHaveLength(1);
    expect(plain.copies[0]!.byteLength).toBeGreaterThan(10 * 2 ** 20); // tens of MB of RAM in use
    await plain.emulator.destroy();

    const released = await restore(state(), true);
    expect(released.ram()).toBe(expected);
    expect(released.copies).toHaveLength(1);
    expect(released.copies[0]!.buffer.byteLength).toBe(0); // the restore's copy, detached

    // A save with its copy let go of is whole: restored, the same RAM.
    const saved = await released.emulator.save_state();
    await Promise.resolve();
    expect(released.copies).toHaveLength(2);
    expect(released.copies[1]!.buffer.byteLength).toBe(0); // the save's copy, detached
    await released.emulator.destroy();
    const again = await restore(saved, true);
    expect(again.ram()).toBe(expected);
    await again.emulator.destroy();
  });
});
