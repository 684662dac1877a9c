// The options every emulator of the computer is created with. A saved state can only be
// restored into an emulator made with the same devices and memory, so the image build
// (vm-images/lib/prestate.ts) uses this same function and hashes this file into its recipe.
import type { MachineDisk } from './disk.ts';
import type { VmNetwork } from './network.ts';

export interface EmulatorSetup {
  bios: ArrayBuffer;
  vgaBios: ArrayBuffer;
  memoryMiB: number;
}

/** v86's `filesystem.handle9p`: answers the guest's 9p requests (workspace-9p.ts). */
export type Handle9p = (request: Uint8Array, reply: (bytes: Uint8Array) => void) => void;

/**
 * `network`: the relay and resolver of a paired proxy; null keeps the NIC with nothing behind it.
 * `handle9p`: the server of /workspace.
 */
export function emulatorOptions(files: EmulatorSetup, disk: MachineDisk, wasmPath: string, network: VmNetwork | null, handle9p: Handle9p): Record<string, unknown> {
  return {
    wasm_path: wasmPath,
    memory_size: files.memoryMiB * 1024 * 1024,
    bios: { buffer: files.bios },
    vga_bios: { buffer: files.vgaBios },
    hda: disk,
    virtio_console: true,
    // The 9p share the guest mounts at /workspace (rc.sysinit), served from the stack's folder by
    // workspace-9p.ts: no copy of the files in the emulator. It must be here at boot: saved states
    // carry the device.
    filesystem: { handle9p },
    // The network card (virtio-net) is always there, so every saved state has it; what is behind
    // it (the proxy's relay) is the host's, chosen at each start. The guest keeps its MAC across wakes.
    net_device: netDevice(network),
    preserve_mac_from_state_image: true,
    autostart: true,
    disable_keyboard: true,
    disable_mouse: true,
    disable_speaker: true,
  };
}

/** What v86 is told its DoH server is; never resolved, answered by network.ts's bridge. */
export const DOH_SENTINEL = 'dns.stackdocs.invalid';

/** The NIC's options: always the same device (saved states carry it), an adapter only with a network. */
export function netDevice(network: VmNetwork | null): Record<string, unknown> {
  return {
    type: 'virtio',
    // Large frames: far fewer packets (and emulated interrupts) per megabyte than Ethernet's 1500.
    mtu: 65520,
    ...(network ? { relay_url: network.relayUrl.replace(/^ws:/, 'wisp:').replace(/^wss:/, 'wisps:'), doh_server: DOH_SENTINEL } : {}),
  };
}
