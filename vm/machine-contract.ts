// What a Machine is given (its boot files, disk, store, /workspace, network, hooks) and what it
// says back (its status and its errors): the types its owners and its tests share.
import type { MachineDisk } from './disk.ts';
import type { EmulatorLike } from './emulator.ts';
import type { WasmInstantiate } from './fresh-memory.ts';
import type { NetworkLink } from './network-link.ts';
import type { TrafficCounter } from './traffic.ts';
import type { Workspace9pSnapshot } from './workspace-9p-snapshot.ts';
import type { WorkspaceFs } from './workspace-fs.ts';

/** Boot files and settings, as fetched from the image (see image.ts). */
export interface MachineBootFiles {
  bios: ArrayBuffer;
  vgaBios: ArrayBuffer;
  /** The kernel and initrd, or a loader for them: only a cold boot needs them, a wake does not. */
  kernel: ArrayBuffer | (() => Promise<{ kernel: ArrayBuffer; initrd: ArrayBuffer }>);
  initrd?: ArrayBuffer;
  cmdline: string;
  memoryMiB: number;
  agentPort: number;
  /**
   * The image's boot state, or a loader for it (null when the image has none): the kernel held in
   * its initramfs with the disk drivers loaded and the root disk not yet mounted (see
   * captureBootState). A cold boot restores it and lets it go on, rather than starting the BIOS
   * and the kernel.
   */
  bootState?: ArrayBuffer | (() => Promise<ArrayBuffer | null>);
}

/**
 * Durable state beside the disk. The generation rule: a saved state may be restored only when
 * the disk still matches it, i.e. readGeneration().disk === readGeneration().state.
 */
export interface MachineStore {
  /** The saved state, in a buffer of the machine's own: dropped once restored. */
  readState(): Promise<ArrayBuffer | null>;
  /**
   * Writes the state atomically and records `generation` as the state's and as the disk's, unless
   * `diskMovedOn` (asked when the record is written) says the disk was written since. The store
   * keeps a copy, if any: the machine lets the buffer go (detaches it) once it is written.
   */
  writeState(state: ArrayBuffer, generation: string, diskMovedOn?: () => boolean): Promise<void>;
  readGeneration(): Promise<{ state: string | null; disk: string | null }>;
  /** Records that the disk moved on from any saved state. Synchronous: called from a disk write. */
  markDiskDirty(): void;
  /** Forgets the saved state (e.g. after a reset). */
  clearState(): Promise<void>;
}

export type MachineStatus =
  | { state: 'off' }
  | { state: 'booting'; detail: string }
  | { state: 'waking' }
  /** `phases`: where the last wake or boot spent its time (ms), for measurements. */
  | { state: 'ready'; bootId: string; woke: boolean; phases?: Record<string, number> }
  | { state: 'suspended' }
  | { state: 'error'; message: string; canReboot: boolean };

/** Points in the lifecycle where the owner keeps other state in step. */
export interface MachineHooks {
  /** After a boot or wake, before the machine is ready: the guest is running. */
  started?(emulator: EmulatorLike, how: 'booted' | 'woke'): Promise<void>;
  /** The emulator is stopped and about to be saved. */
  beforeSave?(): Promise<void>;
  /**
   * The state of `generation` was just taken, the emulator still stopped: what belongs with it
   * must be taken before the hook's first await, for the guest may run on while its promise (the
   * writing) is pending. Written after the state or not at all is safe; it is not awaited to wake.
   */
  saving?(generation: string): Promise<void>;
}

export interface MachineOptions {
  files: MachineBootFiles;
  disk: MachineDisk;
  store: MachineStore;
  /** Where v86.wasm is (a file path in Node, a URL in the browser). */
  wasmPath: string;
  /**
   * Instantiates v86's wasm, e.g. from a module compiled ahead of time (keeps compiling off the
   * wake). Without it v86 loads `wasmPath` itself, and a wake zeroes all of the guest's RAM.
   */
  wasmFn?: WasmInstantiate;
  bootTimeoutMs?: number;
  /** How long a restored boot state has to echo the newline that lets it go on (default 10 s). */
  releaseEchoMs?: number;
  /** Ping the agent every intervalMs while idle; no answer within timeoutMs is an error. */
  watchdog?: { intervalMs: number; timeoutMs: number } | false;
  createEmulator?: (options: Record<string, unknown>) => EmulatorLike;
  hooks?: MachineHooks;
  /**
   * /workspace: the files the guest's 9p share serves, and where the guest's hold on them (its
   * fids) is kept beside each saved state. Absent: an empty, read-only /workspace.
   */
  workspace?: MachineWorkspace;
  /**
   * What is behind the network card, changed while the computer runs (network-link.ts). Absent:
   * nothing is (the image build); the card is there either way, as saved states need it.
   */
  link?: NetworkLink;
  /** Counts the network card's frames of every emulator this machine creates. */
  traffic?: TrafficCounter;
}

export interface MachineWorkspace {
  fs: WorkspaceFs;
  /** The snapshot kept with the saved state of `generation` (null: none, or another state's). */
  read(generation: string): Promise<Workspace9pSnapshot | null>;
  /** Keeps a state's snapshot (taken with the guest stopped; written while it runs on). */
  write(snapshot: Workspace9pSnapshot): Promise<void>;
}

export class MachineError extends Error {
  override readonly name = 'MachineError';
  constructor(readonly code: 'boot_failed' | 'not_running' | 'unresponsive' | 'save_failed' | 'save_abandoned', message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
