// The contract between the stack worker and the VM worker (comlink): what VmApi offers and the
// plain data that crosses. Errors cross as {code, message, retryable}, never as thrown classes.
import type { ExecRequest, ExecResult } from './agent-client.ts';
import type { MachineStatus } from './machine-contract.ts';
import type { VmNetwork } from './network.ts';
import type { NetTraffic } from './traffic.ts';

export type { VmNetwork } from './network.ts';
export type { NetTraffic } from './traffic.ts';

export type { ExecRequest, ExecResult } from './agent-client.ts';

export interface VmStartOptions {
  /** Where the image's manifest.json and files are served (e.g. '/vm/39984eec6bc63029'). */
  imageBaseUrl: string;
  stackId: string;
  /** The proxy's relay and resolver for the guest; absent or null: the computer is offline. */
  network?: VmNetwork | null;
  /** Offline: why, as the guest's user should hear it, e.g. "this device is not paired with the proxy". */
  offline?: string;
}

/** Why the disk is being (re)written from the pristine image. */
export type FillReason = 'first_start' | 'image_changed' | 'incomplete' | 'reset';

export type VmStatus =
  | MachineStatus
  /** Suspended by itself after its long quiet (a rest): its worker may be ended, giving back its memory. */
  | { state: 'suspended'; idle: true }
  | { state: 'downloading'; reason: FillReason; chunksDone: number; chunksTotal: number; bytesDone: number; bytesTotal: number };

/**
 * How much of the computer's system image this browser holds (the rest is fetched when first
 * read): `complete` means the computer works offline. `paused`: offline or storage full (`error`).
 */
export interface VmAvailability {
  state: 'downloading' | 'complete' | 'paused';
  chunksDone: number;
  chunksTotal: number;
  bytesDone: number;
  bytesTotal: number;
  error?: string;
}

export interface VmError {
  code: string;
  message: string;
  retryable?: boolean;
}

export type VmResult<T = void> = { ok: true; value: T } | { ok: false; error: VmError };

export type VmOutputStream = 'stdout' | 'stderr';

/**
 * An exec's outcome; `warning` when its /workspace changes could not all be saved; `network`: why
 * names the command looked up were refused (offline, not allowed by the proxy), one line each.
 */
export type VmExecResult = ExecResult & { warning?: string; network?: string[] };

/**
 * `background`: a long-lived process (a server the stack talks to over its stdin and stdout). Its
 * start holds off the machine's saves, idle suspend and downloads as a command does, until it
 * first writes to stdout (or for a minute); then it runs on without holding anything off. Its
 * output is only streamed, never kept for the result.
 */
export interface VmExecOptions {
  background?: boolean;
}

/** The computer's files at one moment (VmApi.capture), for a checkpoint. */
export interface VmCapture {
  token: string;
  /** machine.json as it stands with the state and overlay below. */
  meta: { imageHash: string | null; state: string | null; disk: string | null };
  /** state.bin; null when it is the one captured last (`stateUnchanged`) or there is none valid. */
  state: Uint8Array | null;
  stateUnchanged: boolean;
  /**
   * The /workspace journal (workspace.json: the fids the guest of that state holds) of a state saved
   * for this capture, taken with it; null:
   * the one in the stack's folder goes with the state (a state saved for a capture is still being
   * written, its journal after it).
   */
  journal: Uint8Array | null;
  /** overlay.map, whole (4 bytes per block held). */
  map: Uint8Array;
  /** overlay.data: its size, and its chunks (CHANGE_CHUNK bytes) copied: all when `full`. */
  dataSize: number;
  full: boolean;
  chunks: { index: number; bytes: Uint8Array }[];
  /**
   * When (ms since the epoch, with fractions) the VM worker took the request up and sent the
   * capture back, and where that time went ("waited 120 ms for a save under way; sync 80, ...").
   */
  handled: { from: number; to: number; detail?: string };
}

export interface VmApi {
  /**
   * Opens the stack's computer: fills its disk from the image when absent or from another
   * image, then wakes from the saved state when the disk still matches it, else cold boots.
   * `onStatus` (a Comlink.proxy) gets every status, download progress included.
   */
  start(options: VmStartOptions, onStatus?: (status: VmStatus) => void): Promise<VmResult<'woke' | 'booted'>>;
  /**
   * Fetches every chunk of the image this browser does not hold yet (also begun by itself after
   * each start), without starting the computer; resolves when done or paused.
   */
  makeAvailableOffline(imageBaseUrl: string): Promise<VmResult<VmAvailability>>;
  /** Adds a listener (a Comlink.proxy) for the offline download's progress. */
  subscribeAvailability(listener: (availability: VmAvailability) => void): Promise<void>;
  /** Adds a status listener (a Comlink.proxy); it is called at once with the current status. */
  subscribeStatus(listener: (status: VmStatus) => void): Promise<void>;
  /**
   * Runs a program. `id` is chosen by the caller (for cancel/stdin); output is streamed to
   * `onOutput` (a Comlink.proxy) when given. Resolves with the exit or an error; never rejects.
   */
  exec(id: string, request: ExecRequest, onOutput?: (stream: VmOutputStream, bytes: Uint8Array) => void, options?: VmExecOptions): Promise<VmResult<VmExecResult>>;
  cancel(id: string, signal?: string): Promise<void>;
  writeStdin(id: string, bytes: Uint8Array, eof: boolean): Promise<void>;
  /** Saves the machine so the next start() wakes it in about a second. */
  suspend(): Promise<VmResult>;
  /**
   * Suspends the machine unless something runs in it (a command, a server): the page has been
   * hidden a while, and its memory is better given back. Resolves true when it suspended it.
   */
  rest(): Promise<VmResult<boolean>>;
  /**
   * Saves the machine where it stands and keeps it running (also done by itself when idle).
   * `onlyIfChanged`: only when something ran or was typed since the last save (the page is
   * being hidden or closed, and that save was not made yet); else nothing is written.
   */
  checkpoint(onlyIfChanged?: boolean): Promise<VmResult>;
  /**
   * The computer as a stack checkpoint keeps it: saved where it stands (the guest's disk synced
   * first) and its disk's overlay copied before the guest runs on. `since`: the token of the
   * last capture this worker made; only the overlay's chunks written since then are copied (all
   * of them for another token), and a state not changed since is not sent again. Null when the
   * computer was never started in this worker.
   */
  capture(since: string | null): Promise<VmResult<VmCapture | null>>;
  /**
   * The stack worker changed a file or folder under its user space in OPFS (or removed it):
   * the guest sees it under /workspace at once. Paths are relative, e.g. `documents/a.pdf`.
   */
  workspaceChanged(path: string): Promise<VmResult>;
  /** The network card's traffic through the proxy's relay since this worker started, over every boot and wake. */
  networkTraffic(): Promise<NetTraffic>;
  /**
   * What is behind the card from now on, for the running computer and its next starts: the
   * proxy's relay and resolver, or null and why not. Open connections end; no restart.
   */
  setNetwork(network: VmNetwork | null, offline?: string): Promise<void>;
  /** Bytes for the serial root shell (a terminal window). */
  terminalInput(bytes: Uint8Array): Promise<void>;
  /** The terminal window's size (stty on the serial console). */
  terminalResize(cols: number, rows: number): Promise<void>;
  /** Subscribes a Comlink.proxy to the serial terminal's output. */
  subscribeTerminal(listener: (bytes: Uint8Array) => void): Promise<void>;
  /** Stops the computer, deletes its disk and state, and refills the disk from the image. */
  reset(): Promise<VmResult<'woke' | 'booted'>>;
  /** Cold boots the computer on its disk as it is (after an error, or on request). */
  reboot(): Promise<VmResult<'booted'>>;
  /** Stops the computer without saving. */
  shutdown(): Promise<void>;
}
