// An in-process stand-in for the guest agent, for unit tests: it speaks the frame protocol,
// acknowledges frames, enforces the receive window (drops frames like v86 does when the guest
// has no buffer) and runs a few canned commands. Test-only: nothing in the product imports it.
import type { AgentTransport } from '../agent-client.ts';
import type { EmulatorLike } from '../emulator.ts';
import { TERMINAL_JOBS } from '../guest-upkeep.ts';
import { encodeFrame, FrameDecoder, type FrameHeader } from '../frames.ts';

interface FakeExec {
  id: string;
  stdin: Uint8Array[];
  pipe: boolean;
  python: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

export class FakeGuest implements AgentTransport {
  private readonly decoder = new FrameDecoder();
  private readonly listeners = new Set<(bytes: Uint8Array) => void>();
  private readonly execs = new Map<string, FakeExec>();
  private chunkParts: Uint8Array[] = [];
  /** Frames received but not yet read (v86 drops input beyond the guest's 16 buffers). */
  private unread = 0;
  readonly received: FrameHeader[] = [];
  dropped = 0;
  maxUnread = 0;
  /** Delay before each frame is read and acknowledged (ms); 0 reads at once. */
  ackDelayMs = 0;
  bootId = 'fake-boot';
  /** Whether it answers `settle` (an agent from before it existed answers `unknown_type`). */
  settles = true;
  /** Whether `settime` takes a seed (an agent from before it did ignores it). */
  reseeds = true;
  /** A program started in the terminal runs (the answer to TERMINAL_JOBS). */
  terminalJob = false;
  /** The stdin each `python3` exec was given (the machine's reseed for an older agent). */
  readonly pythonInputs: Uint8Array[] = [];

  send(bytes: Uint8Array): void {
    if (bytes.length > 4096 || this.unread >= 16) {
      this.dropped++;
      return;
    }
    this.unread++;
    this.maxUnread = Math.max(this.maxUnread, this.unread);
    const copy = bytes.slice();
    const read = () => {
      this.unread--;
      for (const frame of this.decoder.push(copy)) this.handle(frame.header, frame.payload);
    };
    if (this.ackDelayMs > 0) setTimeout(read, this.ackDelayMs);
    else queueMicrotask(read);
  }

  onBytes(listener: (bytes: Uint8Array) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends the agent's `ready`, as after a boot or an agent restart. */
  ready(): void {
    this.emit({ type: 'ready', ...this.info() });
  }

  /** Sends raw bytes to the host, split at the given sizes to exercise reassembly. */
  emitRaw(bytes: Uint8Array): void {
    for (const listener of this.listeners) listener(bytes);
  }

  private info() {
    return { version: 1, bootId: this.bootId, time: Date.now(), uptime: 1, running: [...this.execs.keys()], pythonWarm: true, maxFrame: 4096, window: 8 };
  }

  private emit(header: FrameHeader, payload?: Uint8Array): void {
    const frame = encodeFrame(header, payload);
    // Split each frame in two to prove the host reassembles.
    const cut = Math.floor(frame.length / 2);
    this.emitRaw(frame.subarray(0, cut));
    this.emitRaw(frame.subarray(cut));
  }

  private handle(header: FrameHeader, payload: Uint8Array): void {
    if (typeof header.seq === 'number') this.emit({ type: 'ack', seq: header.seq });
    if (header.type === 'chunk') {
      this.chunkParts.push(payload);
      if (header.last) {
        const inner = this.chunkParts;
        this.chunkParts = [];
        const decoder = new FrameDecoder();
        for (const part of inner) for (const f of decoder.push(part)) this.handle(f.header, f.payload);
      }
      return;
    }
    this.received.push(header);
    const id = header.id as string;
    switch (header.type) {
      case 'ping':
        this.emit({ type: 'pong', id, ...this.info() });
        return;
      case 'settime':
        this.emit({ type: 'result', id, ...(this.reseeds ? { reseeded: typeof header.seed === 'string' } : {}) });
        return;
      case 'settle':
        if (!this.settles) break;
        this.emit({ type: 'result', id });
        return;
      case 'preload':
        this.emit({ type: 'result', id, loaded: header.modules, failed: {}, ms: 5 });
        return;
      case 'exec':
        this.exec(header, payload);
        return;
      case 'stdin':
        this.stdin(header, payload);
        return;
      case 'cancel': {
        const exec = this.execs.get(id);
        if (exec) this.finish(exec, { code: null, signal: 'SIGKILL', cancelled: true });
        return;
      }
    }
    this.emit({ type: 'error', id, code: 'unknown_type', message: `unknown type ${header.type}` });
  }

  /**
   * Commands: `echo TEXT` prints TEXT; `fail` exits 3 with stderr; `sleep` runs until
   * cancelled or its timeout; `cat` echoes stdin at eof; `big N` prints N bytes in 32 KiB
   * frames; `sync; …` succeeds silently-ish; `python3 …` reads stdin and exits 0; anything else
   * is spawn_failed.
   */
  private exec(header: FrameHeader, payload: Uint8Array): void {
    const id = header.id as string;
    const command = String(header.command ?? header.python ?? (header.argv as string[] | undefined)?.join(' ') ?? '');
    const [word, ...rest] = command.split(' ');
    const exec: FakeExec = { id, stdin: payload.length ? [payload] : [], pipe: header.stdin === 'pipe', python: word === 'python3' };
    if (command === TERMINAL_JOBS) {
      this.emit({ type: 'started', id, pid: 99 });
      this.emit({ type: 'stdout', id }, new TextEncoder().encode(this.terminalJob ? 'busy\n' : 'idle\n'));
      this.emit({ type: 'exit', id, signal: null, timedOut: false, cancelled: false, durationMs: 1, code: 0 });
      return;
    }
    const verb = word === 'sync;' ? 'echo' : word; // the machine's pre-save flush
    if (verb !== 'echo' && verb !== 'fail' && verb !== 'sleep' && verb !== 'cat' && verb !== 'big' && verb !== 'python3') {
      this.emit({ type: 'error', id, code: 'spawn_failed', message: `${verb}: not found` });
      return;
    }
    this.execs.set(id, exec);
    this.emit({ type: 'started', id, pid: 100 + this.execs.size, ...(header.python ? { runner: 'warm' } : {}) });
    const text = new TextEncoder();
    if (verb === 'echo') {
      this.emit({ type: 'stdout', id }, text.encode(`${rest.join(' ')}\n`));
      this.finish(exec, { code: 0 });
    } else if (verb === 'fail') {
      this.emit({ type: 'stderr', id }, text.encode('it failed\n'));
      this.finish(exec, { code: 3 });
    } else if (verb === 'big') {
      let left = Number(rest[0]);
      while (left > 0) {
        const n = Math.min(left, 32 * 1024);
        this.emit({ type: 'stdout', id }, new Uint8Array(n).fill(0x61));
        left -= n;
      }
      this.finish(exec, { code: 0 });
    } else if (verb === 'sleep' && typeof header.timeout === 'number' && header.timeout > 0) {
      exec.timer = setTimeout(() => this.finish(exec, { code: null, signal: 'SIGKILL', timedOut: true }), header.timeout * 1000);
    } else if ((verb === 'cat' || verb === 'python3') && header.eof) {
      this.finishCat(exec);
    }
  }

  private stdin(header: FrameHeader, payload: Uint8Array): void {
    const exec = this.execs.get(header.id as string);
    if (!exec || !exec.pipe) {
      this.emit({ type: 'error', id: header.id as string, code: 'unknown_id', message: 'no such exec' });
      return;
    }
    exec.stdin.push(payload);
    if (header.eof) this.finishCat(exec);
  }

  private finishCat(exec: FakeExec): void {
    const total = exec.stdin.reduce((n, p) => n + p.length, 0);
    const all = new Uint8Array(total);
    let off = 0;
    for (const p of exec.stdin) {
      all.set(p, off);
      off += p.length;
    }
    if (exec.python) {
      this.pythonInputs.push(all);
      this.finish(exec, { code: 0 });
      return;
    }
    for (let i = 0; i < all.length; i += 32 * 1024) this.emit({ type: 'stdout', id: exec.id }, all.subarray(i, i + 32 * 1024));
    this.finish(exec, { code: 0 });
  }

  private finish(exec: FakeExec, fields: { code: number | null; signal?: string; timedOut?: boolean; cancelled?: boolean }): void {
    if (exec.timer) clearTimeout(exec.timer);
    this.execs.delete(exec.id);
    this.emit({ type: 'exit', id: exec.id, signal: null, timedOut: false, cancelled: false, durationMs: 1, ...fields });
  }
}

export interface FakeEmulator extends EmulatorLike {
  options: Record<string, unknown>;
  /** The state it was given to restore, as it was when it was made (v86 reads it as it starts). */
  restored: ArrayBuffer | undefined;
  guest: FakeGuest;
  /** How many times save_state was called. */
  saves: number;
  /** What the machine typed on the serial console. */
  serialSent: string[];
  /** Calls this emulator's listeners of `event`, as v86's bus would. */
  fire(event: string, value: unknown): void;
}

/** A stand-in for V86 whose agent port is a FakeGuest (ready after a cold boot, not a wake). */
/**
 * `held`: restored from a boot state (the initramfs waiting on the console), a newline on the
 * serial console is echoed and the agent comes up, as in the image; false: it never answers.
 */
export function fakeEmulatorFactory(created: FakeEmulator[], opts: { silent?: boolean; reseeds?: boolean; held?: boolean } = {}) {
  return (options: Record<string, unknown>): EmulatorLike => {
    const guest = new FakeGuest();
    guest.reseeds = opts.reseeds ?? true;
    const listeners = new Map<string, Set<(v: never) => void>>();
    const emulator: FakeEmulator = {
      options,
      restored: (options.initial_state as { buffer?: ArrayBuffer } | undefined)?.buffer,
      guest,
      saves: 0,
      serialSent: [],
      add_listener: (e, l) => {
        if (!listeners.has(e)) listeners.set(e, new Set());
        listeners.get(e)!.add(l);
        if (e === 'virtio-console1-output-bytes') guest.onBytes(l as (b: Uint8Array) => void);
      },
      remove_listener: (e, l) => void listeners.get(e)?.delete(l),
      bus: { send: (_e, v) => guest.send(v as Uint8Array) },
      save_state: async () => {
        emulator.saves++;
        return new ArrayBuffer(8);
      },
      stop: async () => {},
      run: async () => {},
      destroy: async () => {},
      serial0_send: (data) => {
        emulator.serialSent.push(data);
        if (!options.initial_state || opts.held === false) return;
        for (const char of data.replace(/\n/g, '\r\n')) emulator.fire('serial0-output-byte', char.charCodeAt(0));
        if (data.includes('\n')) setTimeout(() => guest.ready(), 5);
      },
      serial_send_bytes: () => {},
      fire: (event, value) => listeners.get(event)?.forEach((l) => l(value as never)),
      // v86 makes an adapter when the card is given a relay (network-link.ts answers for it).
      ...((options.net_device as { relay_url?: string } | undefined)?.relay_url ? { network_adapter: { send: () => {} } } : {}),
    };
    if (opts.silent) guest.send = () => {};
    setTimeout(() => {
      for (const l of listeners.get('emulator-started') ?? []) l(undefined as never);
      if (!options.initial_state && !opts.silent) guest.ready();
    }, 5);
    created.push(emulator);
    return emulator;
  };
}
