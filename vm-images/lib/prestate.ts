// Boots the freshly made disk once with the app's own Machine (the very emulator options the
// browser uses) and saves the post-boot state, so a user's first start wakes in about a second
// instead of cold booting. The disk is written in place: the image ships the post-boot disk
// with the state that matches it byte for byte.
// Usage (from the repository root): npx tsx vm-images/lib/prestate.ts BOOT_DIR DISK_IMAGE OUT_STATE MEMORY_MIB CMDLINE
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SyncFileDisk } from '../../vm/disk.ts';
import { Machine, type MachineStore } from '../../vm/machine.ts';
import { openNodeSyncFile } from '../../vm/node-file.ts';

const [bootDir, diskPath, outState, memoryMiB, cmdline] = process.argv.slice(2);
if (!cmdline) {
  console.error('usage: tsx prestate.ts BOOT_DIR DISK_IMAGE OUT_STATE MEMORY_MIB CMDLINE');
  process.exit(2);
}

const read = (name: string) => {
  const bytes = readFileSync(join(bootDir!, name));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
};

let saved: ArrayBuffer | null = null;
const store: MachineStore = {
  readState: async () => null,
  writeState: async (state) => {
    saved = state;
  },
  readGeneration: async () => ({ state: null, disk: null }),
  markDiskDirty: () => {},
  clearState: async () => {},
};

const file = openNodeSyncFile(diskPath!);
const machine = new Machine({
  files: { bios: read('bios.bin'), vgaBios: read('vgabios.bin'), kernel: read('bzImage'), initrd: read('initrd.img'), cmdline, memoryMiB: Number(memoryMiB), agentPort: 1 },
  disk: new SyncFileDisk(file),
  store,
  wasmPath: join(import.meta.dirname, '..', '..', 'node_modules', 'v86', 'build', 'v86.wasm'),
  watchdog: false,
  bootTimeoutMs: 600_000,
});

const started = performance.now();
try {
  await machine.coldBoot();
  const booted = performance.now();
  // The share is mounted by rc.sysinit; a state without it would hide /workspace after a wake.
  const mounts = await machine.exec({ command: 'grep -c " /workspace 9p " /proc/mounts || true', timeout: 30 });
  if (mounts.stdout?.trim() !== '1') throw new Error(`/workspace is not the 9p share after boot (${mounts.stdout?.trim()})`);
  // suspend() syncs and drops caches (a small state), then saves; the warm Python runner
  // process is part of the state, so it is warm on the first wake too.
  await machine.suspend();
  if (!saved) throw new Error('the machine was suspended but no state was written');
  writeFileSync(outState!, new Uint8Array(saved));
  console.error(
    `[prestate] booted in ${((booted - started) / 1000).toFixed(1)} s, state ${((saved as ArrayBuffer).byteLength / 2 ** 20).toFixed(1)} MiB`,
  );
} catch (error) {
  console.error(`[prestate] ${error instanceof Error ? error.message : String(error)}`);
  await machine.shutdown();
  process.exitCode = 1;
} finally {
  file.flush();
  file.close();
}
process.exit(process.exitCode ?? 0);
