// Host side of the guest agent protocol (vm-images/README.md), over a v86 virtio-console port.
// A plain-JS reference for the TypeScript host and the client smoke.mjs uses.

const MAGIC = [0x53, 0x44, 0x41, 0x31]; // "SDA1"
const PREFIX = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes one frame: magic, header length, payload length (u32 BE), JSON header, payload. */
export function encodeFrame(header, payload = new Uint8Array(0)) {
  const head = encoder.encode(JSON.stringify(header));
  const frame = new Uint8Array(PREFIX + head.length + payload.length);
  frame.set(MAGIC, 0);
  const view = new DataView(frame.buffer);
  view.setUint32(4, head.length);
  view.setUint32(8, payload.length);
  frame.set(head, PREFIX);
  frame.set(payload, PREFIX + head.length);
  return frame;
}

/** Incremental decoder: push bytes, get back complete {header, payload} frames. */
export class FrameDecoder {
  constructor() {
    this.buf = new Uint8Array(0);
    this.skipped = 0;
  }

  push(bytes) {
    const joined = new Uint8Array(this.buf.length + bytes.length);
    joined.set(this.buf, 0);
    joined.set(bytes, this.buf.length);
    this.buf = joined;
    const frames = [];
    for (;;) {
      const start = this.findMagic();
      if (start < 0) {
        const keep = Math.min(this.buf.length, MAGIC.length - 1);
        this.skipped += this.buf.length - keep;
        this.buf = this.buf.slice(this.buf.length - keep);
        return frames;
      }
      this.skipped += start;
      this.buf = this.buf.subarray(start);
      if (this.buf.length < PREFIX) return frames;
      const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      const headLen = view.getUint32(4);
      const payloadLen = view.getUint32(8);
      if (this.buf.length < PREFIX + headLen + payloadLen) return frames;
      let header = null;
      try {
        header = JSON.parse(decoder.decode(this.buf.subarray(PREFIX, PREFIX + headLen)));
      } catch {
        header = null;
      }
      if (header === null || typeof header !== 'object') {
        this.skipped += MAGIC.length;
        this.buf = this.buf.subarray(MAGIC.length);
        continue;
      }
      const payload = this.buf.slice(PREFIX + headLen, PREFIX + headLen + payloadLen);
      this.buf = this.buf.subarray(PREFIX + headLen + payloadLen);
      frames.push({ header, payload });
    }
  }

  findMagic() {
    const b = this.buf;
    for (let i = 0; i + MAGIC.length <= b.length; i++) {
      if (b[i] === 0x53 && b[i + 1] === 0x44 && b[i + 2] === 0x41 && b[i + 3] === 0x31) return i;
    }
    return -1;
  }
}

/**
 * Talks to the agent on virtio-console port `port`. Host frames go out one per input event,
 * at most `window` unacknowledged at a time; messages bigger than `maxFrame` travel as `chunk`
 * frames. Guest frames are dispatched by request id.
 */
export class AgentClient {
  constructor(emulator, { port = 1, maxFrame = 4096, window = 8 } = {}) {
    this.emulator = emulator;
    this.inputEvent = `virtio-console${port}-input-bytes`;
    this.maxFrame = maxFrame;
    this.window = window;
    this.decoder = new FrameDecoder();
    this.queue = []; // frames waiting for window space
    this.inFlight = new Set(); // seqs sent, not yet acknowledged
    this.seq = 0;
    this.nextId = 1;
    this.pending = new Map(); // request id -> {resolve, reject, onFrame}
    this.readyWaiters = [];
    this.ready = null;
    emulator.add_listener(`virtio-console${port}-output-bytes`, (bytes) => this.onBytes(bytes));
  }

  /** Resolves with the agent's `ready` frame (sent once, when the agent starts). */
  waitReady() {
    if (this.ready) return Promise.resolve(this.ready);
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  onBytes(bytes) {
    for (const { header, payload } of this.decoder.push(bytes)) {
      if (header.type === 'ack') {
        this.inFlight.delete(header.seq);
        this.pump();
      } else if (header.type === 'ready') {
        if (this.ready) this.agentRestarted();
        this.ready = header;
        this.readyWaiters.splice(0).forEach((resolve) => resolve(header));
      } else if (header.id !== undefined && this.pending.has(header.id)) {
        this.pending.get(header.id).onFrame(header, payload);
      }
    }
  }

  /** A second `ready`: the agent restarted and forgot every request and unacknowledged frame. */
  agentRestarted() {
    this.inFlight.clear();
    this.queue.length = 0;
    const lost = [...this.pending.values()];
    this.pending.clear();
    for (const { onFrame } of lost) {
      onFrame({ type: 'error', code: 'agent_restarted', message: 'the guest agent restarted' }, new Uint8Array(0));
    }
  }

  /** Queues one message, splitting it into `chunk` frames when it exceeds maxFrame. */
  send(header, payload = new Uint8Array(0)) {
    const whole = encodeFrame({ ...header, seq: this.seq + 1 }, payload);
    if (whole.length <= this.maxFrame) {
      this.queue.push({ seq: ++this.seq, frame: whole });
    } else {
      const inner = encodeFrame(header, payload);
      const room = this.maxFrame - 64;
      for (let off = 0; off < inner.length; off += room) {
        const last = off + room >= inner.length;
        const seq = ++this.seq;
        this.queue.push({ seq, frame: encodeFrame({ type: 'chunk', seq, last }, inner.subarray(off, off + room)) });
      }
    }
    this.pump();
  }

  pump() {
    while (this.queue.length && this.inFlight.size < this.window) {
      const { seq, frame } = this.queue.shift();
      this.inFlight.add(seq);
      this.emulator.bus.send(this.inputEvent, frame);
    }
  }

  /** Sends a request answered by one frame (pong, result or error). */
  request(header) {
    const id = header.id ?? `r${this.nextId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        onFrame: (frame) => {
          this.pending.delete(id);
          if (frame.type === 'error') reject(Object.assign(new Error(frame.message), { code: frame.code }));
          else resolve(frame);
        },
      });
      this.send({ ...header, id });
    });
  }

  ping() {
    return this.request({ type: 'ping' });
  }

  /**
   * Runs a command; resolves with {exit, stdout, stderr, started} once the `exit` frame came,
   * rejects on an `error` frame. opts: command | argv | python (+ args), cwd, env, timeout,
   * stdin ('none' | 'pipe'), input (bytes for stdin, closed after), onOutput(kind, bytes).
   */
  exec(opts) {
    const id = opts.id ?? `e${this.nextId++}`;
    const { input, onOutput, ...rest } = opts;
    const out = { stdout: [], stderr: [] };
    let started = null;
    const promise = new Promise((resolve, reject) => {
      this.pending.set(id, {
        onFrame: (header, payload) => {
          if (header.type === 'started') started = header;
          else if (header.type === 'stdout' || header.type === 'stderr') {
            out[header.type].push(payload);
            onOutput?.(header.type, payload);
          } else if (header.type === 'exit' || header.type === 'error') {
            this.pending.delete(id);
            if (header.type === 'error') {
              reject(Object.assign(new Error(header.message), { code: header.code }));
              return;
            }
            const text = (parts) => Buffer.concat(parts).toString('utf8');
            resolve({ exit: header, started, stdout: text(out.stdout), stderr: text(out.stderr) });
          }
        },
      });
    });
    this.send({ type: 'exec', id, ...rest, ...(input ? { stdin: 'pipe' } : {}) });
    if (input) this.writeStdin(id, input, true);
    return { id, promise };
  }

  /** Streams bytes to the exec's stdin in frames that fit one guest buffer. */
  writeStdin(id, bytes, eof = false) {
    const step = 3 * 1024;
    let off = 0;
    do {
      const piece = bytes.subarray(off, off + step);
      off += step;
      const last = off >= bytes.length;
      this.send({ type: 'stdin', id, ...(last && eof ? { eof: true } : {}) }, piece);
    } while (off < bytes.length);
  }

  cancel(id, signal) {
    this.send({ type: 'cancel', id, ...(signal ? { signal } : {}) });
  }
}
