// What the VM worker's API modules share: the worker's dependencies, the one machine and its
// files, its status and who hears it, the terminal's listeners, and the state of the saves.
import type { BaseChunks } from '../disk/base-chunks.ts';
import type { Overlay } from '../disk/overlay.ts';
import type { FetchLike, ImageManifest } from '../image.ts';
import type { Machine } from '../machine.ts';
import type { MachineBootFiles, MachineOptions } from '../machine-contract.ts';
import type { LinkScope } from '../network-link.ts';
import type { OpfsMachineFiles } from '../opfs-store.ts';
import type { VmStartOptions, VmStatus } from '../protocol.ts';
import { isStoredImageUrl, storedImageFetch } from '../stored-image.ts';
import type { Workspace9pSnapshot } from '../workspace-9p-snapshot.ts';

export interface VmWorkerDeps {
  storageRoot: () => Promise<FileSystemDirectoryHandle>;
  fetch?: typeof fetch;
  wasmPath?: string;
  /** v86's wasm compiled ahead of time (started when the worker starts). */
  wasmModule?: Promise<WebAssembly.Module>;
  /** Replaces v86 (tests). */
  createEmulator?: MachineOptions['createEmulator'];
  /** Quiet time after the last exec or keystroke before a checkpoint is saved (ms; 0: never). */
  checkpointAfterMs?: number;
  /** How long the guest reads nothing from its disk before the chunks kept in memory go back (15 s). */
  diskQuietMs?: number;
  /** Quiet time after which the machine is suspended to free the CPU and memory (ms; 0: never). */
  suspendAfterMs?: number;
  /**
   * Whose `fetch` (DNS) and `WebSocket` (the relay) v86 uses: the worker's global scope, wrapped
   * so both follow the stack's network of the moment (network-link.ts).
   */
  networkScope?: LinkScope;
  /** How long a cold boot waits for the boot state this browser does not hold yet (ms). */
  bootStateWaitMs?: number;
}

/** A quiet-time save under way (see `VmContext.quietSave`). */
export interface QuietSave {
  taken: Promise<void>;
  state: { generation: string; state: ArrayBuffer } | null;
}

export interface VmContext {
  readonly deps: VmWorkerDeps;
  /** The image is served by the app, or kept in this browser (stored-image.ts) for a stack that came with its own. */
  readonly imageFetch: FetchLike;
  readonly statusListeners: Set<(status: VmStatus) => void>;
  readonly terminalListeners: Set<(bytes: Uint8Array) => void>;
  status: VmStatus;
  machine: Machine | null;
  files: OpfsMachineFiles | null;
  opened: { options: VmStartOptions; manifest: ImageManifest; boot: MachineBootFiles } | null;
  /** Commands (and servers while they start) under way: saves, the image download and the idle rest wait for them. */
  activeExecs: number;
  /** Commands not yet ended, servers included (activeExecs counts a server only while it starts). */
  runningExecs: number;
  /** The stack worker's file changes being loaded into /workspace, in the order they were told. */
  hostChanges: Promise<unknown>;
  /** The last keystroke into the terminal, or output from it: someone is using the computer. */
  lastTerminalUse: number;
  startedAt: number;
  /** The disk's overlay in use. */
  overlayInUse: Overlay | null;
  /** The /workspace share's snapshot taken with the last state saved (its generation inside). */
  savedJournal: Workspace9pSnapshot | null;
  /** The image's chunks: one store per worker and image, shared through OPFS with every stack. */
  baseChunks: BaseChunks | null;
  /** The next quiet-time save, when one is due (activity since the last save). */
  checkpointTimer: ReturnType<typeof setTimeout> | null;
  /** A save under way (quiet-time, or one a capture asked for). */
  checkpointing: Promise<unknown> | null;
  lastCheckpoint: number;
  /**
   * The quiet-time save under way: `taken` once its state is taken and the guest runs on (or once
   * it ended), and that state while it is being written. A checkpoint's capture with nothing
   * happened since uses it rather than wait for the write (seconds on a slow disk).
   */
  quietSave: QuietSave | null;
  /** The idle timer's rest is under way: its "suspended" says so. */
  restingIdle: boolean;
  /** Stops the background download of the image (at shutdown). */
  downloadAbort: AbortController | null;
  /** Tells every status listener. */
  emit(next: VmStatus): void;
  /** Writes to every terminal listener. */
  writeTerminal(bytes: Uint8Array): void;
}

export function createVmContext(deps: VmWorkerDeps): VmContext {
  const storedFetch = storedImageFetch(deps.storageRoot);
  const ctx: VmContext = {
    deps,
    imageFetch: (url) => (isStoredImageUrl(url) ? storedFetch(url) : (deps.fetch ?? fetch)(url)),
    statusListeners: new Set(),
    terminalListeners: new Set(),
    status: { state: 'off' },
    machine: null,
    files: null,
    opened: null,
    activeExecs: 0,
    runningExecs: 0,
    hostChanges: Promise.resolve(),
    lastTerminalUse: 0,
    startedAt: 0,
    overlayInUse: null,
    savedJournal: null,
    baseChunks: null,
    checkpointTimer: null,
    checkpointing: null,
    lastCheckpoint: 0,
    quietSave: null,
    restingIdle: false,
    downloadAbort: null,
    emit(next) {
      if (next.state === 'suspended' && ctx.restingIdle) next = { state: 'suspended', idle: true };
      ctx.status = next;
      for (const listener of ctx.statusListeners) listener(next);
    },
    writeTerminal(bytes) {
      ctx.terminalListeners.forEach((listener) => listener(bytes));
    },
  };
  return ctx;
}

