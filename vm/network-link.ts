// What is behind the computer's network card, changed while the computer runs: the user turns
// the stack's network off or on, points the app at another proxy, or pairs this device, and the
// next lookup or connection goes the new way at once, with no restart and no reload.
//
// v86's Wisp adapter opens its relay's WebSocket when the emulator is created and keeps that URL
// for its life. So the adapter is created with a sentinel relay (RELAY_NETWORK) that is never
// dialled: this worker's WebSocket constructor hands it a RelaySocket instead, which forwards the
// Wisp frames to the real relay of the network of the moment. When the network changes, the
// guest's open connections are ended (their streams lived on the old relay) and new ones go to
// the new relay. Offline, the adapter's frames are answered by offline-network.ts (lookups
// refused, connections reset, each with its reason) instead of reaching the relay at all.
import { DOH_SENTINEL } from './emulator-options.ts';
import type { EmulatorLike } from './emulator.ts';
import { installDnsBridge } from './dns-bridge.ts';
import type { DnsNotice, VmNetwork } from './network.ts';
import { answer } from './offline-network.ts';
import { deliverReopeningWindows, type FakeTcpHost } from './tcp-window.ts';

/** The relay v86's adapter is created with; `ws://relay.stackdocs.invalid/` is never dialled. */
export const RELAY_SENTINEL = 'relay.stackdocs.invalid';
export const RELAY_NETWORK: VmNetwork = { relayUrl: `ws://${RELAY_SENTINEL}/`, dnsUrl: `https://${DOH_SENTINEL}/dns-query`, ticket: '' };

// Wisp's packet types and the close reason used when a stream's relay went away.
const CONNECT = 0x01;
const CLOSE = 0x04;
const REASON_NETWORK_ERROR = 0x03;

/** v86's WispNetworkAdapter: its bus handler calls `this.send(frame)` for each frame the card sends. */
interface CardAdapter {
  send(frame: Uint8Array): void;
}

export interface NetworkLink {
  /** Puts the network of the moment behind a new emulator's card (and each later change). */
  attach(emulator: EmulatorLike): void;
  /**
   * The network from now on: the proxy's relay and resolver, or null and why not (the end of
   * "the computer is offline (…)"). Open connections end; the next ones go the new way.
   */
  set(network: VmNetwork | null, offline?: string): void;
  /** Whether a relay is behind the card now. */
  readonly online: boolean;
}

export interface LinkScope {
  fetch: typeof fetch;
  WebSocket?: typeof WebSocket;
}

/**
 * Wraps `scope.fetch` (v86's DoH lookups, network.ts) and `scope.WebSocket` (its relay socket) so
 * that both follow `set()`. One per worker: the worker runs one computer at a time.
 */
export function installNetworkLink(scope: LinkScope, onNotice: (notice: DnsNotice) => void): NetworkLink {
  const setDns = installDnsBridge(scope, onNotice);
  const RealSocket = scope.WebSocket;
  let network: VmNetwork | null = null;
  let offlineReason = 'the computer is offline (it has no network)';
  let socket: RelaySocket | null = null;
  let emulator: EmulatorLike | null = null;

  const openReal = (url: string | URL, protocols?: string | string[]): WebSocket => {
    if (!RealSocket) throw new Error('this worker has no WebSocket');
    return new RealSocket(url, protocols);
  };
  const sentinel = (url: string | URL) => {
    try {
      return new URL(String(url)).hostname === RELAY_SENTINEL;
    } catch {
      return false;
    }
  };
  const Wrapped = function (this: unknown, url: string | URL, protocols?: string | string[]) {
    if (!sentinel(url)) return openReal(url, protocols);
    socket?.close();
    socket = new RelaySocket(openReal, (host) => onNotice({ name: host, reason: 'the computer is offline (the proxy could not be reached)' }));
    socket.retarget(network?.relayUrl ?? null);
    return socket;
  };
  scope.WebSocket = (RealSocket ? Object.assign(Wrapped, { prototype: RealSocket.prototype, CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 }) : Wrapped) as unknown as typeof WebSocket;

  /** Offline, the card's frames are answered here; online, by v86's adapter (its own `send`, wrapped). */
  const applyTo = (target: EmulatorLike) => {
    const adapter = target.network_adapter as CardAdapter | undefined;
    if (!adapter) throw new Error('the emulator has no network adapter: create it with RELAY_NETWORK');
    if (network) {
      // v86's own `send` (on its prototype) feeds its TCP stack; the frames pass through
      // tcp-window.ts on the way, which re-sends a segment into a window the guest reopened.
      delete (adapter as Partial<CardAdapter>).send;
      const send = adapter.send;
      adapter.send = (frame: Uint8Array) => deliverReopeningWindows(adapter as FakeTcpHost, frame, (f) => send.call(adapter, f));
      return;
    }
    const reason = offlineReason;
    adapter.send = (frame: Uint8Array) => {
      const reply = answer(frame, reason, onNotice);
      if (reply) target.bus.send('net0-receive', reply);
    };
  };

  return {
    attach(target) {
      emulator = target;
      if (target.network_adapter) return applyTo(target);
      // v86 makes its adapter once its wasm is loaded, and says so before the guest runs.
      const loaded = () => {
        target.remove_listener('emulator-loaded', loaded as (value: never) => void);
        if (emulator === target) applyTo(target);
      };
      target.add_listener('emulator-loaded', loaded as (value: never) => void);
    },
    set(next, offline) {
      network = next;
      offlineReason = `the computer is offline (${offline ?? 'it has no network'})`;
      setDns(next);
      socket?.retarget(next?.relayUrl ?? null);
      if (emulator) applyTo(emulator);
    },
    get online() {
      return network !== null;
    },
  };
}

/**
 * Stands in for the WebSocket of v86's Wisp adapter (which uses `binaryType`, `onmessage`,
 * `onclose`, `send` and `close`). It never closes towards the adapter (the adapter would dial its
 * sentinel again in 10 s); when the relay goes away, the streams it carried are closed instead,
 * and the next connection dials the relay again.
 */
export class RelaySocket {
  binaryType = 'arraybuffer';
  readyState = 1;
  onmessage: ((event: { data: ArrayBuffer }) => void) | null = null;
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  private url: string | null = null;
  private real: WebSocket | null = null;
  private open = false;
  /** Frames waiting for the relay's socket to open. */
  private pending: Uint8Array[] = [];
  /** Streams the guest opened on the current relay, with where they go ("10.0.0.1:443"). */
  private readonly streams = new Map<number, string>();
  private closed = false;

  constructor(
    private readonly dial: (url: string) => WebSocket,
    private readonly unreachable: (host: string) => void,
  ) {}

  /**
   * The relay from now on (null: none). A different relay ends every open stream; the same relay
   * with a new ticket keeps them (the ticket is checked when a socket opens) for the next dial.
   */
  retarget(url: string | null): void {
    if (url === this.url) return;
    if (url && this.url && withoutQuery(url) === withoutQuery(this.url)) {
      this.url = url;
      return;
    }
    this.drop();
    this.url = url;
    // Dialled now: the relay's first word (how many packets a stream may send) must come
    // before the guest's first connection, or v86 holds that connection back for good.
    if (url && !this.closed) this.connect(url);
  }

  send(data: Uint8Array | ArrayBuffer): void {
    if (this.closed) return;
    const frame = data instanceof Uint8Array ? data : new Uint8Array(data);
    if (frame.length < 5) return;
    const type = frame[0]!;
    const id = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getUint32(1, true);
    if (type === CONNECT) this.streams.set(id, where(frame));
    if (type === CLOSE) this.streams.delete(id);
    if (!this.url) {
      if (type === CONNECT) this.end(id, true);
      return;
    }
    if (this.open && this.real) {
      this.real.send(frame);
      return;
    }
    this.pending.push(frame);
    if (!this.real) this.connect(this.url);
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  private connect(url: string): void {
    let real: WebSocket;
    try {
      real = this.dial(url);
    } catch {
      this.lost(true);
      return;
    }
    real.binaryType = 'arraybuffer';
    this.real = real;
    real.onopen = () => {
      if (this.real !== real) return;
      this.open = true;
      const waiting = this.pending;
      this.pending = [];
      for (const frame of waiting) real.send(frame);
    };
    real.onmessage = (event: MessageEvent) => {
      if (this.real !== real) return;
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      if (bytes[0] === CLOSE && bytes.length >= 5) this.streams.delete(new DataView(bytes.buffer, bytes.byteOffset).getUint32(1, true));
      this.onmessage?.({ data: event.data as ArrayBuffer });
    };
    real.onclose = () => {
      if (this.real !== real) return;
      // Refused before it opened (the proxy is down, the ticket refused): say so for each waiting connection.
      this.lost(!this.open);
    };
  }

  /** The relay's socket is gone: its streams end, and the next frame dials again. */
  private lost(unreachable: boolean): void {
    this.real = null;
    this.open = false;
    this.pending = [];
    for (const id of [...this.streams.keys()]) this.end(id, unreachable);
  }

  /** Leaves the current relay: its socket closes and the guest's streams on it end. */
  private drop(): void {
    const real = this.real;
    this.real = null;
    this.open = false;
    this.pending = [];
    if (real) {
      real.onopen = real.onmessage = real.onclose = real.onerror = null;
      try {
        real.close();
      } catch {
        // already closing
      }
    }
    for (const id of [...this.streams.keys()]) this.end(id, false);
  }

  /** Tells the adapter that stream `id` closed (the guest's connection ends). */
  private end(id: number, unreachable: boolean): void {
    const host = this.streams.get(id);
    this.streams.delete(id);
    if (unreachable && host) this.unreachable(host);
    const frame = new Uint8Array(6);
    frame[0] = CLOSE;
    new DataView(frame.buffer).setUint32(1, id, true);
    frame[5] = REASON_NETWORK_ERROR;
    // Never inside the adapter's own send: it records the stream after sending its CONNECT.
    queueMicrotask(() => this.onmessage?.({ data: frame.buffer }));
  }
}

function withoutQuery(url: string): string {
  return url.replace(/[?#].*$/, '');
}

/** "host:port" of a CONNECT frame (type, stream, TCP, port, host). */
function where(frame: Uint8Array): string {
  if (frame.length < 8) return 'a host';
  const port = new DataView(frame.buffer, frame.byteOffset, frame.byteLength).getUint16(6, true);
  return `${new TextDecoder().decode(frame.subarray(8))}:${port}`;
}
