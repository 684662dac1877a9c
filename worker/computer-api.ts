// The computer as the rest of the stack worker sees it (`Computer`), what it is built from
// (`ComputerDeps`) and the error a caller meets when there is no computer to run on.
import type { ComputerAction, ComputerStatus } from '../protocol/computer.ts';
import type { ExecRequest, NetTraffic, VmApi, VmCapture, VmExecResult, VmNetwork } from '../vm/protocol.ts';

/** The computer's network: the proxy's relay and resolver, or why it has none. */
export type ComputerNetwork = { network: VmNetwork } | { network: null; offline: string };

export interface ComputerDeps {
  /** The VM worker's API (a comlink remote), made on first use; null when this build has no image. */
  connect: (() => VmApi) | null;
  /**
   * Ends the VM worker behind an API connect() made: a stopped emulator's memory (hundreds of MB)
   * is only given back with its worker. The next use connects again.
   */
  disconnect?: (vm: VmApi) => void;
  /** Where the image is served, e.g. `/vm/39984eec6bc63029/`. */
  imageBaseUrl: string | null;
  /**
   * The image this stack's computer runs on when it is not the app's: one kept in this browser
   * (vm/stored-image.ts), brought by a stack file that included it. Asked at each start.
   */
  storedImage?: () => Promise<string | null>;
  stackId: string;
  emit(status: ComputerStatus): void;
  /** The proxy's relay and resolver for the guest, asked at each start and change; or why it has none. */
  network?: () => Promise<ComputerNetwork>;
  /** Wraps a callback that crosses into the VM worker (Comlink.proxy; identity in tests). */
  proxy<T extends object>(callback: T): T;
  now?: () => number;
}

export class ComputerUnavailableError extends Error {
  override readonly name = 'ComputerUnavailableError';
}

export interface Computer {
  readonly status: ComputerStatus;
  /** Starts (or wakes) the computer; resolves with the status it reached. Never rejects. */
  start(): Promise<ComputerStatus>;
  /**
   * `save`: saves the state now if it changed since the last save (the page is being hidden).
   * `download`: fetches the rest of the system image so the computer works offline (not started).
   */
  control(action: ComputerAction): Promise<ComputerStatus>;
  /**
   * Runs a program, starting the computer first when needed. Throws ComputerUnavailableError
   * when there is no computer or it cannot start; a failed run is a result, not a throw.
   */
  exec(request: ExecRequest, options?: { signal?: AbortSignal; onOutput?: (stream: 'stdout' | 'stderr', text: string) => void }): Promise<VmExecResult>;
  /**
   * Starts a long-lived process (a server) whose stdin stays open, starting the computer first
   * when needed: its output is streamed, never kept, and it does not hold off the machine's saves
   * or rest. `exited` resolves when it ends, however it ends (never rejects). Throws
   * ComputerUnavailableError when there is no computer or it cannot start.
   */
  service(request: ExecRequest, options: { signal: AbortSignal; onOutput: (stream: 'stdout' | 'stderr', text: string) => void }): Promise<ComputerService>;
  /** The stack worker wrote or removed `path` in user space: show it under /workspace. */
  workspaceChanged(path: string): void;
  subscribeTerminal(listener: (bytes: Uint8Array) => void): Promise<void>;
  terminalInput(bytes: Uint8Array): Promise<void>;
  terminalResize(cols: number, rows: number): Promise<void>;
  /**
   * The network card's traffic since the page opened (nothing before the computer first starts),
   * and `online`: whether the running computer has a network (null when not running).
   */
  networkUse(): Promise<NetTraffic & { online: boolean | null }>;
  /**
   * The stack's network may have changed (Settings, pairing): a running computer takes it at
   * once, its open connections ending; a stopped one takes it at its next start anyway.
   */
  networkChanged(): Promise<void>;
  /**
   * The computer's files as they stand, for a checkpoint (VmApi.capture): null when it was not
   * started since the page opened (its files in OPFS are then still). Throws when saving fails.
   */
  capture(since: string | null): Promise<VmCapture | null>;
}

/** A process started by `service`. */
export interface ComputerService {
  /** Writes to its stdin (in order); `eof` closes it. */
  write(bytes: Uint8Array, eof?: boolean): Promise<void>;
  /** How it ended: its exit, or why the computer lost it (`error`). */
  exited: Promise<{ result: VmExecResult } | { error: string }>;
}
