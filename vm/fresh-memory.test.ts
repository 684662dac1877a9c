import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { V86 } from 'v86';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncFileDisk } from './disk.ts';
import { emulatorOptions } from './emulator-options.ts';
import { freshMemoryRestore, INIT_WRITTEN_BYTES, type WasmInstantiate } from './fresh-memory.ts';
import { unpackSavedState, type ImageManifest } from './image.ts';
import { nodeV86Wasm, openNodeSyncFile } from './node-file.ts';
import { Workspace9p } from './workspace-9p.ts';
import { emptyWorkspaceFs } from './workspace-fs.ts';
import { V86_WASM_PATH } from './testing/v86-emulator.ts';

describe('freshMemoryRestore', () => {
  it("narrows only the restore's first full zeroing to what v86's init wrote", async () => {
    const calls: Array<[number, number]> = [];
    const fake: WasmInstantiate = async () => ({ zero_memory: (start: number, length: number) => void calls.push([start, length]), other: 1 }) as never;
    const exports = await freshMemoryRestore(fake)({});
    const zero = exports.zero_memory as (start: number, length: number) => void;
    zero(0, 512 * 1024 * 1024);
    zero(0, 512 * 1024 * 1024);
    zero(4096, 8192);
    expect(calls).toEqual([
      [0, INIT_WRITTEN_BYTES],
      [0, 512 * 1024 * 1024],
      [4096, 8192],
    ]);
    expect(exports.other).toBe(1);
  });
});

const IMAGE_DIR = join(import.meta.dirname, '..', 'vm-images', 'out', 'latest');

const MANIFEST = join(IMAGE_DIR, 'manifest.json');
const pristine = existsSync(MANIFEST) ? (JSON.parse(readFileSync(MANIFEST, 'utf8')) as ImageManifest).pristineState : undefined;

describe.skipIf(!pristine || process.env.STACKDOCS_SKIP_VM_BOOT === '1')('a wake of the real image', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vm-fresh-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Restores the pristine state without running it; returns a hash of the guest's RAM. */
  async function restoredMemory(instantiate: WasmInstantiate, files: Parameters<typeof emulatorOptions>[0], diskSize: number): Promise<string> {
    const state = unpackSavedState(readFileSync(join(IMAGE_DIR, pristine!.file)), pristine!.size);
    const disk = new SyncFileDisk(openNodeSyncFile(join(dir, 'disk.img')), diskSize);
    const emulator = new V86({
      ...emulatorOptions(files, disk, V86_WASM_PATH, null, new Workspace9p(emptyWorkspaceFs()).handle),
      wasm_fn: instantiate,
      initial_state: { buffer: state.buffer.slice(state.byteOffset, state.byteOffset + state.byteLength) },
      autostart: false,
    } as never) as unknown as { add_listener(e: string, f: () => void): void; destroy(): Promise<void>; v86: { cpu: { mem8: Uint8Array; memory_size: Uint32Array } } };
    await new Promise<void>((resolve) => emulator.add_listener('emulator-loaded', resolve));
    const { cpu } = emulator.v86;
    const hash = createHash('sha256').update(cpu.mem8.subarray(0, cpu.memory_size[0])).digest('hex');
    await emulator.destroy();
    return hash;
  }

  it('leaves the guest RAM byte-identical to a restore that zeroes all of it', { timeout: 120_000 }, async () => {
    // Restoring reads no disk block: an empty disk of the right size will do.
    const manifest = JSON.parse(readFileSync(join(IMAGE_DIR, 'manifest.json'), 'utf8')) as ImageManifest;
    openNodeSyncFile(join(dir, 'disk.img')).truncate(manifest.disk.size);
    const read = (name: string) => new Uint8Array(readFileSync(join(IMAGE_DIR, name))).buffer;
    const files = { bios: read('bios.bin'), vgaBios: read('vgabios.bin'), memoryMiB: manifest.memoryMiB };
    const instantiate = nodeV86Wasm(V86_WASM_PATH);
    const full = await restoredMemory(instantiate, files, manifest.disk.size);
    const fresh = await restoredMemory(freshMemoryRestore(instantiate), files, manifest.disk.size);
    expect(fresh).toBe(full);
    // And the check can fail: skipping the zeroing altogether leaves the BIOS where the state has zeros.
    const skipped: WasmInstantiate = async (imports) => ({ ...(await instantiate(imports)), zero_memory: () => {} });
    expect(await restoredMemory(skipped, files, manifest.disk.size)).not.toBe(full);
  });
});
