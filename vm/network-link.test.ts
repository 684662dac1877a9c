import { describe, expect, it } from 'vitest';
import { dnsQuery, REASON } from './testing/guest-frames.ts';
import type { EmulatorLike } from './emulator.ts';
import type { DnsNotice, VmNetwork } from './network.ts';
import { installNetworkLink, RELAY_NETWORK, type LinkScope } from './network-link.ts';

const NET_A: VmNetwork = { relayUrl: 'ws://proxy-a.test/v1/wisp?ticket=a', dnsUrl: 'http://proxy-a.test/dns-query', ticket: 'a' };
const NET_B: VmNetwork = { relayUrl: 'ws://proxy-b.test/v1/wisp?ticket=b', dnsUrl: 'http://proxy-b.test/dns-query', ticket: 'b' };

/** A browser WebSocket that the test opens, feeds and closes. */
class FakeSocket {
  static made: FakeSocket[] = [];
  binaryType = 'blob';
  sent: Uint8Array[] = [];
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: ArrayBuffer }) => void) | null = null;
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }
  send(data: Uint8Array) {
    this.sent.push(new Uint8Array(data));
  }
  close() {
    this.closed = true;
  }
  open() {
    this.onopen?.();
  }
  message(frame: Uint8Array) {
    this.onmessage?.({ data: new Uint8Array(frame).buffer });
  }
  drop() {
    this.onclose?.();
  }
}

const frame = (type: number, id: number, payload: number[] = []) => {
  const bytes = new Uint8Array(5 + payload.length);
  bytes[0] = type;
  new DataView(bytes.buffer).setUint32(1, id, true);
  bytes.set(payload, 5);
  return bytes;
};
/** CONNECT (TCP) to host:port, as v86's adapter sends it. */
const connect = (id: number, host: string, port: number) => {
  const name = new TextEncoder().encode(host);
  const bytes = new Uint8Array(8 + name.length);
  bytes.set([1], 0);
  new DataView(bytes.buffer).setUint32(1, id, true);
  bytes[5] = 1;
  new DataView(bytes.buffer).setUint16(6, port, true);
  bytes.set(name, 8);
  return bytes;
};
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * What v86 does with a relay URL: its Wisp adapter dials it with the scope's WebSocket, its bus
 * handler calls `adapter.send(frame)` for each frame from the card, and its replies go to the bus.
 */
function emulatorWith(scope: LinkScope) {
  const received: Uint8Array[] = [];
  const onBus: [string, Uint8Array][] = [];
  const relay = RELAY_NETWORK.relayUrl;
  const socket = new scope.WebSocket!(relay) as unknown as { send(f: Uint8Array): void; onmessage: ((e: { data: ArrayBuffer }) => void) | null };
  socket.onmessage = (event) => received.push(new Uint8Array(event.data));
  const online: Uint8Array[] = [];
  // v86's `send` is the adapter class's own (on its prototype); offline, the link shadows it.
  const adapter = Object.assign(Object.create({ send: (f: Uint8Array) => void online.push(f) }) as object, { wisp: (f: Uint8Array) => socket.send(f) });
  const emulator = { network_adapter: adapter, bus: { send: (event: string, value: Uint8Array) => onBus.push([event, value]) } } as unknown as EmulatorLike;
  return { emulator, adapter, received, onBus, online, card: (f: Uint8Array) => (adapter as unknown as { send(f: Uint8Array): void }).send(f) };
}

function setUp() {
  FakeSocket.made = [];
  const notices: DnsNotice[] = [];
  const lookups: string[] = [];
  const scope: LinkScope = {
    fetch: (async (input: RequestInfo | URL) => {
      lookups.push(String(input));
      return new Response(new Uint8Array(12), { headers: { 'content-type': 'application/dns-message' } });
    }) as typeof fetch,
    WebSocket: FakeSocket as unknown as typeof WebSocket,
  };
  const link = installNetworkLink(scope, (notice) => notices.push(notice));
  return { scope, link, notices, lookups };
}

/** A link on NET_A with an emulator attached; `relay`: the socket it dialled. */
function attachedOnline() {
  const parts = setUp();
  parts.link.set(NET_A);
  const card = emulatorWith(parts.scope);
  parts.link.attach(card.emulator);
  return { ...parts, ...card, relay: FakeSocket.made.at(-1)! };
}

describe('the network behind the running computer’s card', () => {
  it('forwards the adapter’s Wisp frames to the relay of the moment, holding them until it opens', () => {
    const { link, adapter, received, relay } = attachedOnline();
    expect(relay.url).toBe(NET_A.relayUrl);
    expect(relay.binaryType).toBe('arraybuffer');
    adapter.wisp(connect(1, '10.0.0.1', 80));
    adapter.wisp(frame(2, 1, [7, 7]));
    expect(relay.sent).toEqual([]);
    relay.open();
    expect(relay.sent.map((f) => f[0])).toEqual([1, 2]);
    relay.message(frame(3, 0, [128, 0, 0, 0]));
    expect(received.map((f) => f[0])).toEqual([3]);
    expect(link.online).toBe(true);
  });

  it('another proxy: the guest’s open connections end, new ones go to the new relay, lookups to its resolver', async () => {
    const { scope, link, lookups, adapter, received, relay: first } = attachedOnline();
    first.open();
    adapter.wisp(connect(1, '10.0.0.1', 80));
    adapter.wisp(connect(2, '10.0.0.2', 443));
    first.message(frame(4, 2, [2])); // the relay closed stream 2 itself

    link.set(NET_B);
    await tick();
    expect(first.closed).toBe(true);
    // Stream 1 is closed towards the guest (network error); stream 2 was closed already.
    expect(received.filter((f) => f[0] === 4).map((f) => [new DataView(f.buffer).getUint32(1, true), f[5]])).toEqual([[2, 2], [1, 3]]);
    const second = FakeSocket.made.at(-1)!;
    expect(second.url).toBe(NET_B.relayUrl);
    second.open();
    adapter.wisp(connect(3, '10.0.0.3', 80));
    expect(second.sent.map((f) => f[0])).toEqual([1]);
    await scope.fetch('https://dns.stackdocs.invalid/dns-query', { method: 'POST', body: new Uint8Array(dnsQuery('x.test').subarray(42)) });
    expect(lookups).toEqual([NET_B.dnsUrl]);
  });

  it('the same relay with a fresh ticket keeps the open connections, and the next dial uses the new ticket', async () => {
    const { link, adapter, received, relay } = attachedOnline();
    relay.open();
    adapter.wisp(connect(1, '10.0.0.1', 80));
    const fresh = { ...NET_A, relayUrl: 'ws://proxy-a.test/v1/wisp?ticket=a2', ticket: 'a2' };
    link.set(fresh);
    await tick();
    expect(relay.closed).toBe(false);
    expect(received).toEqual([]);
    adapter.wisp(frame(2, 1, [1]));
    expect(relay.sent.map((f) => f[0])).toEqual([1, 2]);
    relay.drop();
    adapter.wisp(connect(2, '10.0.0.1', 80));
    expect(FakeSocket.made.at(-1)!.url).toBe(fresh.relayUrl);
  });

  it('turned off: the card is answered here (lookups refused with the reason), the relay is left; turned on again, v86’s adapter answers', async () => {
    const { link, notices, adapter, received, onBus, online, card, relay } = attachedOnline();
    relay.open();
    adapter.wisp(connect(1, '10.0.0.1', 80));

    link.set(null, 'its network is turned off for this stack in Settings');
    await tick();
    expect(relay.closed).toBe(true);
    expect(received.map((f) => f[0])).toEqual([4]);
    expect(link.online).toBe(false);
    card(dnsQuery('pypi.org'));
    expect(onBus.map(([event]) => event)).toEqual(['net0-receive']);
    expect(notices).toEqual([{ name: 'pypi.org', reason: REASON }]);

    link.set(NET_A);
    card(dnsQuery('pypi.org'));
    // v86's own send has it (through tcp-window.ts), not the offline answers.
    expect(online).toHaveLength(1);
    expect(onBus).toHaveLength(1);
    expect(FakeSocket.made.at(-1)!.url).toBe(NET_A.relayUrl);
  });

  it('a relay that cannot be reached ends the waiting connections at once, says where, and is dialled again for the next', async () => {
    const { notices, adapter, received, relay } = attachedOnline();
    relay.drop();
    adapter.wisp(connect(1, '192.0.2.10', 80));
    const again = FakeSocket.made.at(-1)!;
    expect(FakeSocket.made.map((s) => s.url)).toEqual([NET_A.relayUrl, NET_A.relayUrl]); // the sentinel itself is never dialled
    again.drop();
    await tick();
    expect(received.map((f) => f[0])).toEqual([4]);
    expect(notices).toEqual([{ name: '192.0.2.10:80', reason: 'the computer is offline (the proxy could not be reached)' }]);
  });

  it('waits for v86 to make its adapter (once its wasm is loaded) before it answers for it', () => {
    const { scope, link } = setUp();
    link.set(null, 'it has no network');
    const { emulator, adapter } = emulatorWith(scope);
    const listeners = new Map<string, (value: never) => void>();
    const loading = { ...emulator, network_adapter: undefined, add_listener: (event: string, fn: (value: never) => void) => listeners.set(event, fn), remove_listener: (event: string) => listeners.delete(event) } as unknown as EmulatorLike;
    link.attach(loading);
    expect(Object.hasOwn(adapter, 'send')).toBe(false);
    (loading as { network_adapter?: unknown }).network_adapter = adapter;
    listeners.get('emulator-loaded')!(undefined as never);
    expect(Object.hasOwn(adapter, 'send')).toBe(true);
    expect(listeners.size).toBe(0);
  });

  it('leaves every other WebSocket alone', () => {
    const { scope } = setUp();
    const other = new scope.WebSocket!('wss://elsewhere.test/socket');
    expect(other).toBeInstanceOf(FakeSocket);
    expect((other as unknown as FakeSocket).url).toBe('wss://elsewhere.test/socket');
  });
});
