// The options every emulator of the computer is created with. A saved state can only be
// restored into an emulator made with the same devices and memory, so the image build
// (vm-images/lib/prestate.ts) uses this same function and hashes this file into its recipe.
import type { SyncFileDisk } from './disk.ts';

export interface EmulatorSetup {
  bios: ArrayBuffer;
  vgaBios: ArrayBuffer;
  memoryMiB: number;
}

export function emulatorOptions(files: EmulatorSetup, disk: SyncFileDisk, wasmPath: string): Record<string, unknown> {
  return {
    wasm_path: wasmPath,
    memory_size: files.memoryMiB * 1024 * 1024,
    bios: { buffer: files.bios },
    vga_bios: { buffer: files.vgaBios },
    hda: disk,
    virtio_console: true,
    // An in-memory 9p filesystem the guest mounts at /workspace (rc.sysinit); workspace.ts
    // mirrors it to OPFS. It must be here at boot: saved states carry the device.
    filesystem: {},
    autostart: true,
    disable_keyboard: true,
    disable_mouse: true,
    disable_speaker: true,
  };
}
