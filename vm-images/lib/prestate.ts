// Boots the freshly made disk once with the app's own Machine (the very emulator options the
// browser uses) and saves the post-boot state, so a user's first start wakes in about a second
// instead of cold booting. The disk is written in place: the image ships the post-boot disk
// with the state that matches it byte for byte.
//
// Then it wakes that state once more on a copy-on-write view of the disk (the disk file stays as
// saved) and does what a user's first minute does -- the agent's ping and clock, a terminal, a
// first command in /workspace -- and writes the disk chunks those reads touched (WAKE_SET, a JSON
// array of chunk indices for CHUNK_SIZE-byte chunks). The app fetches those before the first
// start and the rest on demand, so a first shell needs a few MB, not the whole image.
//
// First of all it saves the boot state (OUT_BOOT_STATE): the kernel started and held in its
// initramfs before it mounts the disk (Machine.captureBootState). A cold boot -- after a tab
// was killed, the disk moved on from any saved state -- restores that rather than starting the
// BIOS and the kernel.
// Usage (from the repository root):
//   npx tsx vm-images/lib/prestate.ts BOOT_DIR DISK_IMAGE OUT_STATE MEMORY_MIB CMDLINE WAKE_SET CHUNK_SIZE OUT_BOOT_STATE
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFully, SyncFileDisk, type MachineDisk, type SyncFile } from '../../vm/disk.ts';
import { Machine, type MachineStore, type MachineWorkspace } from '../../vm/machine.ts';
import { openNodeSyncFile } from '../../vm/node-file.ts';
import { nodeWorkspaceFs } from '../../vm/node-workspace-fs.ts';
import type { Workspace9pSnapshot } from '../../vm/workspace-9p.ts';

const [bootDir, diskPath, outState, memoryMiB, cmdline, wakeSetPath, chunkSizeArg, outBootState] = process.argv.slice(2);
if (!outBootState) {
  console.error('usage: tsx prestate.ts BOOT_DIR DISK_IMAGE OUT_STATE MEMORY_MIB CMDLINE WAKE_SET CHUNK_SIZE OUT_BOOT_STATE');
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

/**
 * The disk file seen through a copy-on-write layer: the guest's writes stay in memory, and every
 * chunk a read (or a partial write) touches is recorded.
 */
class RecordingDisk implements MachineDisk {
  readonly byteLength: number;
  onload: ((event: object) => void) | undefined = undefined;
  dirty = false;
  onFirstWrite: (() => void) | undefined = undefined;
  readonly touched = new Set<number>();
  private readonly written = new Map<number, Uint8Array>();

  constructor(private readonly file: SyncFile, private readonly chunkSize: number) {
    this.byteLength = file.size;
  }
  load() {
    this.onload?.({});
  }
  get(offset: number, len: number, callback: (bytes: Uint8Array) => void) {
    const out = new Uint8Array(len);
    for (let sector = offset / 512; sector < (offset + len) / 512; sector++) {
      const into = out.subarray(sector * 512 - offset, sector * 512 - offset + 512);
      const mine = this.written.get(sector);
      if (mine) into.set(mine);
      else {
        this.touched.add(Math.floor((sector * 512) / this.chunkSize));
        readFully(this.file, into, sector * 512);
      }
    }
    callback(out);
  }
  get_from_cache(offset: number, len: number) {
    let bytes = new Uint8Array(0);
    this.get(offset, len, (b) => (bytes = b));
    return bytes;
  }
  get_and_cache(offset: number, len: number, callback: (bytes: Uint8Array) => void) {
    this.get(offset, len, callback);
  }
  set(offset: number, bytes: Uint8Array, callback: () => void) {
    this.dirty = true;
    for (let at = 0; at < bytes.length; at += 512) this.written.set((offset + at) / 512, bytes.slice(at, at + 512));
    callback();
  }
  get_buffer(callback: (buffer: ArrayBuffer | undefined) => void) {
    callback(undefined);
  }
  get_state() {
    return [];
  }
  set_state() {}
  clearDirty() {
    this.dirty = false;
  }
  flush() {}
}

// /workspace as a new stack has it: an empty folder. What the guest holds of it (its mount) is
// saved beside the state (OUT_STATE.workspace.json) and shipped in the manifest with it.
const workspaceDir = mkdtempSync(join(tmpdir(), 'prestate-workspace-'));
let share: Workspace9pSnapshot | null = null;
const workspace: MachineWorkspace = {
  fs: nodeWorkspaceFs(workspaceDir),
  read: async (generation) => (share?.generation === generation ? share : null),
  write: async (snapshot) => {
    share = snapshot;
  },
};

const file = openNodeSyncFile(diskPath!);
const bootFiles = { bios: read('bios.bin'), vgaBios: read('vgabios.bin'), kernel: read('bzImage'), initrd: read('initrd.img'), cmdline, memoryMiB: Number(memoryMiB), agentPort: 1 };
const wasmPath = join(import.meta.dirname, '..', '..', 'node_modules', 'v86', 'build', 'v86.wasm');
const machine = new Machine({ files: bootFiles, disk: new SyncFileDisk(file), store, wasmPath, watchdog: false, bootTimeoutMs: 600_000, workspace });

/** Wakes the saved state on a copy-on-write view and returns the chunks a first minute reads. */
async function recordWakeSet(state: ArrayBuffer): Promise<number[]> {
  const disk = new RecordingDisk(file, Number(chunkSizeArg));
  const wakeStore: MachineStore = {
    readState: async () => state,
    writeState: async () => {},
    readGeneration: async () => ({ state: share!.generation, disk: share!.generation }),
    markDiskDirty: () => {},
    clearState: async () => {},
  };
  const woken = new Machine({ files: bootFiles, disk, store: wakeStore, wasmPath, watchdog: false, workspace });
  try {
    if ((await woken.start()) !== 'woke') throw new Error('the saved state did not wake');
    // A terminal opening (its size set, a prompt asked for) and a first command in /workspace.
    await woken.agent?.resize(24, 80, '/dev/ttyS0');
    woken.sendSerial(new TextEncoder().encode('\r'));
    const first = await woken.exec({ command: 'cd /workspace && ls -la && cat /etc/os-release >/dev/null && echo ok', timeout: 60 });
    if (first.stdout?.trim().split('\n').at(-1) !== 'ok') throw new Error(`the first command failed: ${first.stderr ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 2000)); // the prompt, whatever it reads
    return [...disk.touched].sort((a, b) => a - b);
  } finally {
    await woken.shutdown();
  }
}

let started = performance.now();
try {
  // Held before the disk is mounted: it reads nothing of it but its size and first sectors.
  const bootState = await machine.captureBootState();
  writeFileSync(outBootState, new Uint8Array(bootState));
  console.error(`[prestate] boot state held in ${((performance.now() - started) / 1000).toFixed(1)} s, ${(bootState.byteLength / 2 ** 20).toFixed(1)} MiB`);
  started = performance.now();
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
  if (!share) throw new Error('the /workspace share was not saved with the state');
  const { msize, fids } = share as Workspace9pSnapshot;
  writeFileSync(`${outState}.workspace.json`, JSON.stringify({ msize, fids }));
  console.error(
    `[prestate] booted in ${((booted - started) / 1000).toFixed(1)} s, state ${((saved as ArrayBuffer).byteLength / 2 ** 20).toFixed(1)} MiB`,
  );
  const wakeSet = await recordWakeSet(saved);
  writeFileSync(wakeSetPath!, JSON.stringify(wakeSet));
  console.error(`[prestate] a wake and a first command read ${wakeSet.length} chunks of ${Number(chunkSizeArg) / 2 ** 20} MiB`);
} catch (error) {
  console.error(`[prestate] ${error instanceof Error ? error.message : String(error)}`);
  await machine.shutdown();
  process.exitCode = 1;
} finally {
  file.flush();
  file.close();
  rmSync(workspaceDir, { recursive: true, force: true });
}
process.exit(process.exitCode ?? 0);
