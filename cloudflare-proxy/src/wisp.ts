// A Wisp v1 server (MercuryWorkshop's protocol, the one v86's network adapter speaks) over a
// Workers WebSocket: many TCP streams multiplexed on one socket. Frames are `u8 type | u32 LE
// stream id | payload`. Which streams may open, and to where, is the policy's decision; this
// file only speaks the protocol. TLS stays end to end in the guest: the bytes are relayed as they are.

export const CONNECT = 0x01;
export const DATA = 0x02;
export const CONTINUE = 0x03;
export const CLOSE = 0x04;

export const STREAM_TCP = 0x01;

/** CLOSE reasons (protocol.md). */
export const REASON = {
  voluntary: 0x02,
  networkError: 0x03,
  invalidInfo: 0x41,
  unreachable: 0x42,
  timeout: 0x43,
  refused: 0x44,
  blocked: 0x48,
  throttled: 0x49,
} as const;

/** A TCP connection the policy opened (the Workers `Socket`, as much of it as is used). */
export interface RelaySocket {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
  close(): Promise<void> | void;
}

export interface WispPolicy {
  /** Opens a connection to `host:port`, or says why not with a CLOSE reason. */
  open(host: string, port: number, streamType: number): Promise<{ socket: RelaySocket } | { reason: number }>;
  /** Bytes relayed, either way, as they go (what the device's day is counted in). */
  onBytes?(bytes: number): void;
}

/** What the policy can do to a running relay. */
export interface WispRelay {
  /** Ends every stream with `reason`, then the socket, saying `why` in its close frame. */
  stop(reason: number, why: string): void;
}

/** The WebSocket end the server writes to and reads from (a Workers server socket, accepted). */
export interface WispSocket {
  send(data: ArrayBuffer | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close' | 'error', listener: () => void): void;
}

/** Packets a stream may have in flight before it waits for a CONTINUE (the client counts them). */
export const BUFFER_PACKETS = 128;
/** Streams at once on one socket; more are refused as throttled. */
export const MAX_STREAMS = 64;
/** Largest DATA payload sent to the client: one read from the socket. */
const MAX_DATA_PAYLOAD = 60 * 1024;

interface Stream {
  writer: WritableStreamDefaultWriter<Uint8Array> | null;
  socket: RelaySocket | null;
  /** DATA that came before the connection opened (the client may send it at once). */
  pending: Uint8Array[];
  /** DATA packets written since the last CONTINUE. */
  written: number;
  closed: boolean;
  /** Writes in order. */
  chain: Promise<void>;
}

export function frame(type: number, streamId: number, payload: Uint8Array = new Uint8Array()): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(5 + payload.length);
  const view = new DataView(out.buffer);
  view.setUint8(0, type);
  view.setUint32(1, streamId, true);
  out.set(payload, 5);
  return out;
}

const u32 = (value: number) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value, true);
  return bytes;
};

/** Serves Wisp on `ws` until it closes, or until the policy stops it. */
export function serveWisp(ws: WispSocket, policy: WispPolicy): WispRelay {
  const streams = new Map<number, Stream>();
  let open = true;
  const send = (bytes: Uint8Array) => {
    if (!open) return;
    try {
      ws.send(bytes);
    } catch {
      open = false;
    }
  };

  function end(id: number, reason: number | null) {
    const stream = streams.get(id);
    if (!stream || stream.closed) return;
    stream.closed = true;
    streams.delete(id);
    if (reason !== null) send(frame(CLOSE, id, Uint8Array.of(reason)));
    void Promise.resolve(stream.socket?.close()).catch(() => {});
  }

  function write(id: number, stream: Stream, data: Uint8Array) {
    stream.chain = stream.chain.then(async () => {
      if (stream.closed || !stream.writer) return;
      try {
        await stream.writer.write(data);
      } catch {
        return end(id, REASON.networkError);
      }
      policy.onBytes?.(data.length);
      // The client stops after BUFFER_PACKETS; half way, it is told the buffer is free again.
      if (++stream.written >= BUFFER_PACKETS / 2) {
        stream.written = 0;
        send(frame(CONTINUE, id, u32(BUFFER_PACKETS)));
      }
    });
  }

  async function pump(id: number, stream: Stream, socket: RelaySocket) {
    const reader = socket.readable.getReader();
    try {
      await relayReads(reader, stream, (data) => {
        policy.onBytes?.(data.length);
        for (let at = 0; at < data.length; at += MAX_DATA_PAYLOAD) send(frame(DATA, id, data.subarray(at, at + MAX_DATA_PAYLOAD)));
      });
      end(id, REASON.voluntary);
    } catch {
      end(id, REASON.networkError);
    }
  }

  async function connect(id: number, streamType: number, port: number, host: string) {
    const stream: Stream = { writer: null, socket: null, pending: [], written: 0, closed: false, chain: Promise.resolve() };
    streams.set(id, stream);
    const opened = await policy.open(host, port, streamType).catch(() => ({ reason: REASON.networkError }));
    if (stream.closed) {
      // The client gave up (CLOSE) while it was opening.
      if ('socket' in opened) void Promise.resolve(opened.socket.close()).catch(() => {});
      return;
    }
    if (!('socket' in opened)) return end(id, opened.reason);
    stream.socket = opened.socket;
    stream.writer = opened.socket.writable.getWriter();
    for (const data of stream.pending.splice(0)) write(id, stream, data);
    void pump(id, stream, opened.socket);
  }

  function onMessage(data: unknown) {
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
    // Text or a frame too short to have a header: not this protocol.
    if (!bytes || bytes.length < 5) return ws.close(1003, 'Wisp frames are binary.');
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const type = view.getUint8(0);
    const id = view.getUint32(1, true);
    const payload = bytes.subarray(5);
    switch (type) {
      case CONNECT: {
        if (id === 0 || streams.has(id) || payload.length < 4) return send(frame(CLOSE, id, Uint8Array.of(REASON.invalidInfo)));
        if (streams.size >= MAX_STREAMS) return send(frame(CLOSE, id, Uint8Array.of(REASON.throttled)));
        const streamType = payload[0]!;
        const port = payload[1]! | (payload[2]! << 8);
        const host = new TextDecoder().decode(payload.subarray(3));
        void connect(id, streamType, port, host);
        return;
      }
      case DATA: {
        const stream = streams.get(id);
        if (!stream) return;
        // A copy: the frame's buffer is not ours to keep.
        const copy = payload.slice();
        if (!stream.writer) {
          if (stream.pending.length >= BUFFER_PACKETS) return end(id, REASON.throttled);
          stream.pending.push(copy);
        } else write(id, stream, copy);
        return;
      }
      case CLOSE:
        return end(id, null);
      default:
        // CONTINUE (client to server) and unknown types mean nothing here.
        return;
    }
  }

  ws.addEventListener('message', (event) => onMessage(event.data));
  const shutDown = () => {
    open = false;
    for (const id of [...streams.keys()]) end(id, null);
  };
  ws.addEventListener('close', shutDown);
  ws.addEventListener('error', shutDown);
  // v1: the buffer size on stream 0, at once; the client waits for it before anything else.
  send(frame(CONTINUE, 0, u32(BUFFER_PACKETS)));
  return {
    stop(reason, why) {
      for (const id of [...streams.keys()]) end(id, reason);
      if (!open) return;
      open = false;
      try {
        // 1008: policy violation; a close frame's reason holds 123 bytes.
        ws.close(1008, truncateUtf8(why, 123));
      } catch {
        // Already closing.
      }
    },
  };
}

/**
 * Reads a socket until it ends or its stream is closed, handing `deliver` what it read. The
 * socket hands over its reads 4 KB at a time. Each DATA frame becomes one TCP segment in the guest's
 * emulated network stack, and the guest's work per segment (an interrupt, an ACK) is what bounds
 * a download; so reads that are already there when one arrives go out with it, up to
 * MAX_DATA_PAYLOAD, and nothing waits longer than a turn of the loop. Rejects when a read fails.
 */
async function relayReads(reader: ReadableStreamDefaultReader<Uint8Array>, stream: Pick<Stream, 'closed'>, deliver: (data: Uint8Array) => void): Promise<void> {
  let next = reader.read();
  for (;;) {
    const first = await next;
    if (first.done || stream.closed) break;
    const parts = [first.value];
    let size = first.value.length;
    let ended = false;
    next = reader.read();
    while (size < MAX_DATA_PAYLOAD) {
      const more = await Promise.race([next, nextTurn()]);
      if (more === null) break;
      if (more.done) {
        ended = true;
        break;
      }
      parts.push(more.value);
      size += more.value.length;
      next = reader.read();
    }
    deliver(parts.length === 1 ? parts[0]! : concat(parts, size));
    if (ended || stream.closed) break;
  }
}

function truncateUtf8(text: string, bytes: number): string {
  let out = text;
  while (new TextEncoder().encode(out).length > bytes) out = out.slice(0, -1);
  return out;
}

/** Resolves with null after the event loop's current turn (the I/O that is ready runs first). */
function nextTurn(): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), 0));
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
