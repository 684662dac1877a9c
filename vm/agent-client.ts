// Host side of the guest agent protocol (vm-images/README.md) over any byte transport: an
// acknowledged window of small frames towards the guest, requests matched to answers by id.
import { encodeFrame, FrameDecoder, type FrameHeader } from './frames.ts';

/** A byte pipe to the agent, e.g. a v86 virtio-console port. */
export interface AgentTransport {
  send(bytes: Uint8Array): void;
  /** Subscribes to guest bytes; returns the unsubscribe function. */
  onBytes(listener: (bytes: Uint8Array) => void): () => void;
}

/** Codes the agent sends, plus the host's own (`timeout`, `agent_restarted`, `closed`, `aborted`). */
export type AgentErrorCode =
  | 'bad_request' | 'bad_cwd' | 'spawn_failed' | 'unknown_id' | 'unknown_type' | 'settle_failed'
  | 'runner_unavailable' | 'runner_died' | 'bad_frame' | 'too_large'
  | 'timeout' | 'agent_restarted' | 'closed' | 'aborted';

export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(readonly code: AgentErrorCode | (string & {}), message: string) {
    super(message);
  }
}

/** The agent's `ready` / `pong` fields. */
export interface AgentInfo {
  version: number;
  bootId: string;
  time: number;
  uptime: number;
  running: Array<string | number>;
  pythonWarm: boolean;
  maxFrame: number;
  window: number;
}

export interface ExecRequest {
  /** Exactly one of command (bash -c), argv (PATH lookup) or python (warm runner). */
  command?: string;
  argv?: string[];
  python?: string;
  args?: string[];
  cwd?: string;
  /** String values are set over the base environment; null removes a variable. */
  env?: Record<string, string | null>;
  /** Seconds; the whole process group gets SIGKILL after it. */
  timeout?: number;
  /** 'pipe' keeps stdin open for writeStdin(); implied by `input`. */
  stdin?: 'none' | 'pipe';
  /** Bytes (or UTF-8 text) written to stdin, which is closed after them. */
  input?: Uint8Array | string;
}

export interface ExecOptions {
  /** The exec id; one is chosen when absent. Must not belong to a running exec. */
  id?: string;
  onStdout?: (bytes: Uint8Array) => void;
  onStderr?: (bytes: Uint8Array) => void;
  onStarted?: (info: { pid: number; runner?: 'warm' | 'cold' }) => void;
  /** Aborting sends `cancel` (SIGKILL to the process group); the result has cancelled: true. */
  signal?: AbortSignal;
  /** Collect stdout/stderr as text into the result (default true). */
  collect?: boolean;
}

export interface ExecResult {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  pid?: number;
  runner?: 'warm' | 'cold';
  stdout?: string;
  stderr?: string;
}

export interface PreloadResult {
  loaded: string[];
  failed: Record<string, string>;
  ms: number;
}

export interface AgentClientOptions {
  /** Largest frame the guest takes in one buffer (the agent's maxFrame). */
  maxFrame?: number;
  /** Unacknowledged frames allowed in flight (the agent's window). */
  window?: number;
  /**
   * True after a cold boot: nothing is sent until the agent's `ready` (it discards earlier
   * bytes). False after a wake, when the agent is already running.
   */
  awaitReady?: boolean;
}

type FrameHandler = (header: FrameHeader, payload: Uint8Array) => void;

const STDIN_STEP = 3 * 1024; // a stdin piece plus its header fits one 4 KiB guest buffer
const CHUNK_ROOM = 64; // header room reserved in each chunk frame

export class AgentClient {
  private readonly decoder = new FrameDecoder();
  private readonly queue: Array<{ seq: number; frame: Uint8Array }> = [];
  private readonly inFlight = new Set<number>();
  private readonly pending = new Map<string, FrameHandler>();
  private readonly readyWaiters: Array<(info: AgentInfo) => void> = [];
  private readonly readyListeners = new Set<(info: AgentInfo, restarted: boolean) => void>();
  private readonly unsubscribe: () => void;
  private readonly maxFrame: number;
  private readonly window: number;
  private seq = 0;
  private nextId = 1;
  private gated: boolean;
  private closed = false;
  /** The last `ready` seen, or null. */
  info: AgentInfo | null = null;

  constructor(private readonly transport: AgentTransport, options: AgentClientOptions = {}) {
    this.maxFrame = options.maxFrame ?? 4096;
    this.window = options.window ?? 8;
    this.gated = options.awaitReady ?? true;
    this.unsubscribe = transport.onBytes((bytes) => this.receive(bytes));
  }

  /** Resolves with the agent's `ready`; rejects with AgentError('timeout') after timeoutMs. */
  waitReady(timeoutMs?: number): Promise<AgentInfo> {
    if (this.info) return Promise.resolve(this.info);
    return withTimeout(new Promise<AgentInfo>((resolve) => this.readyWaiters.push(resolve)), timeoutMs, 'the guest agent did not start');
  }

  /** Called on every `ready`; `restarted` is true when the agent had already been ready. */
  onReady(listener: (info: AgentInfo, restarted: boolean) => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  ping(timeoutMs?: number): Promise<AgentInfo> {
    return this.request({ type: 'ping' }, timeoutMs) as unknown as Promise<AgentInfo>;
  }

  /**
   * Sets the guest clock (it stands still while the machine is saved) and, given a `seed`, mixes
   * it into the guest kernel's random pool and reseeds its generator. `reseeded` is false from an
   * agent older than the seed, which ignores it.
   */
  async settime(epochMs: number = Date.now(), timeoutMs?: number, seed?: Uint8Array): Promise<{ reseeded: boolean }> {
    const r = await this.request({ type: 'settime', epochMs, ...(seed ? { seed: btoa(String.fromCharCode(...seed)) } : {}) }, timeoutMs);
    return { reseeded: r.reseeded === true };
  }

  /** Imports modules into the warm Python runner. */
  async preload(modules: string[], timeoutMs?: number): Promise<PreloadResult> {
    const r = await this.request({ type: 'preload', modules }, timeoutMs);
    return { loaded: (r.loaded as string[]) ?? [], failed: (r.failed as Record<string, string>) ?? {}, ms: Number(r.ms ?? 0) };
  }

  /**
   * Syncs the guest's disks and drops its caches, before a save (an agent older than this answers
   * `unknown_type`).
   */
  async settle(timeoutMs?: number): Promise<void> {
    await this.request({ type: 'settle' }, timeoutMs);
  }

  /** Tells programs on a terminal its size (SIGWINCH). */
  async resize(rows: number, cols: number, tty?: string): Promise<void> {
    await this.request({ type: 'resize', rows, cols, ...(tty ? { tty } : {}) });
  }

  /**
   * Runs a program. Resolves once its `exit` arrives; rejects with AgentError on an agent
   * `error` (bad_cwd, spawn_failed…), on an agent restart, or when the client closes.
   */
  exec(request: ExecRequest, options: ExecOptions = {}): Promise<ExecResult> {
    const id = options.id ?? `e${this.nextId++}`;
    if (this.closed) return Promise.reject(new AgentError('closed', 'the connection to the computer is closed'));
    if (this.pending.has(id)) return Promise.reject(new AgentError('bad_request', `exec id ${id} is in use`));
    if (options.signal?.aborted) return Promise.reject(new AgentError('aborted', 'the command was cancelled before it started'));
    const collect = options.collect ?? true;
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    const { input, ...fields } = request;
    const inputBytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
    let started: { pid?: number; runner?: 'warm' | 'cold' } = {};
    const onAbort = () => this.cancel(id);
    return new Promise<ExecResult>((resolve, reject) => {
      this.pending.set(id, (header, payload) => {
        switch (header.type) {
          case 'started':
            started = { pid: header.pid as number, ...(header.runner ? { runner: header.runner as 'warm' | 'cold' } : {}) };
            options.onStarted?.(started as { pid: number });
            return;
          case 'stdout':
            if (collect) out.push(payload);
            options.onStdout?.(payload);
            return;
          case 'stderr':
            if (collect) err.push(payload);
            options.onStderr?.(payload);
            return;
          case 'exit':
          case 'error':
            this.pending.delete(id);
            options.signal?.removeEventListener('abort', onAbort);
            if (header.type === 'error') {
              reject(toAgentError(header));
              return;
            }
            resolve({
              code: (header.code as number | null) ?? null,
              signal: (header.signal as string | null) ?? null,
              timedOut: Boolean(header.timedOut),
              cancelled: Boolean(header.cancelled),
              durationMs: Number(header.durationMs ?? 0),
              ...started,
              ...(collect ? { stdout: decodeText(out), stderr: decodeText(err) } : {}),
            });
            return;
        }
      });
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.send({ type: 'exec', id, ...stripUndefined(fields), ...(inputBytes ? { stdin: 'pipe' } : {}) });
      if (inputBytes) this.writeStdin(id, inputBytes, true);
    });
  }

  /** Streams bytes to a running exec's stdin (started with stdin: 'pipe'). */
  writeStdin(id: string, bytes: Uint8Array, eof = false): void {
    let off = 0;
    do {
      const piece = bytes.subarray(off, off + STDIN_STEP);
      off += STDIN_STEP;
      const last = off >= bytes.length;
      this.send({ type: 'stdin', id, ...(last && eof ? { eof: true } : {}) }, piece);
    } while (off < bytes.length);
  }

  /** Signals a running exec's process group (default SIGKILL). Does nothing once it ended. */
  cancel(id: string, signal?: string | number): void {
    if (!this.pending.has(id)) return;
    this.send({ type: 'cancel', id, ...(signal !== undefined ? { signal } : {}) });
  }

  /** Fails every pending request and stops listening. Must not throw. */
  close(reason = 'the connection to the computer is closed'): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.failPending(new AgentError('closed', reason));
    this.queue.length = 0;
  }

  /** Number of requests (execs included) waiting for an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  private request(header: FrameHeader, timeoutMs?: number): Promise<FrameHeader> {
    if (this.closed) return Promise.reject(new AgentError('closed', 'the connection to the computer is closed'));
    const id = `r${this.nextId++}`;
    const answer = new Promise<FrameHeader>((resolve, reject) => {
      this.pending.set(id, (frame) => {
        this.pending.delete(id);
        if (frame.type === 'error') reject(toAgentError(frame));
        else resolve(frame);
      });
      this.send({ ...header, id });
    });
    return withTimeout(answer, timeoutMs, `the computer did not answer ${header.type}`, () => this.pending.delete(id));
  }

  private receive(bytes: Uint8Array): void {
    for (const { header, payload } of this.decoder.push(bytes)) {
      if (header.type === 'ack') {
        this.inFlight.delete(header.seq as number);
        this.pump();
      } else if (header.type === 'ready') {
        this.handleReady(header as unknown as AgentInfo);
      } else if (header.id !== undefined) {
        this.pending.get(String(header.id))?.(header, payload);
      }
    }
  }

  private handleReady(info: AgentInfo): void {
    const restarted = this.info !== null || (!this.gated && this.pending.size > 0);
    if (restarted) {
      // The new agent knows nothing of earlier requests or unacknowledged frames.
      this.inFlight.clear();
      this.queue.length = 0;
      this.failPending(new AgentError('agent_restarted', 'the guest agent restarted'));
    }
    this.info = info;
    this.gated = false;
    for (const resolve of this.readyWaiters.splice(0)) resolve(info);
    for (const listener of this.readyListeners) listener(info, restarted);
    this.pump();
  }

  private failPending(error: AgentError): void {
    const handlers = [...this.pending.values()];
    this.pending.clear();
    for (const handler of handlers) handler({ type: 'error', code: error.code, message: error.message }, new Uint8Array(0));
  }

  /** Queues one message as a frame, or as chunk frames when it exceeds maxFrame. */
  private send(header: FrameHeader, payload?: Uint8Array): void {
    if (this.closed) return;
    const whole = encodeFrame({ ...header, seq: this.seq + 1 }, payload);
    if (whole.length <= this.maxFrame) {
      this.queue.push({ seq: ++this.seq, frame: whole });
    } else {
      const inner = encodeFrame(header, payload);
      const room = this.maxFrame - CHUNK_ROOM;
      for (let off = 0; off < inner.length; off += room) {
        const seq = ++this.seq;
        const last = off + room >= inner.length;
        this.queue.push({ seq, frame: encodeFrame({ type: 'chunk', seq, last }, inner.subarray(off, off + room)) });
      }
    }
    this.pump();
  }

  private pump(): void {
    if (this.gated) return;
    while (this.queue.length > 0 && this.inFlight.size < this.window) {
      const next = this.queue.shift()!;
      this.inFlight.add(next.seq);
      this.transport.send(next.frame);
    }
  }
}

function toAgentError(header: FrameHeader): AgentError {
  return new AgentError(String(header.code ?? 'unknown'), String(header.message ?? header.code ?? 'agent error'));
}

function decodeText(parts: Uint8Array[]): string {
  const decoder = new TextDecoder();
  let text = '';
  for (const part of parts) text += decoder.decode(part, { stream: true });
  return text + decoder.decode();
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number | undefined, message: string, onTimeout?: () => void): Promise<T> {
  if (!timeoutMs) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout?.();
      reject(new AgentError('timeout', message));
    }, timeoutMs);
    promise.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (error: unknown) => { clearTimeout(timer); reject(error); },
    );
  });
}
