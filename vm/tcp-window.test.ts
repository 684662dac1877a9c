import { afterEach, describe, expect, it } from 'vitest';
import { netDevice } from './emulator-options.ts';
import { TCP, tcpFrame } from './testing/guest-frames.ts';
import type { EmulatorLike } from './emulator.ts';
import type { VmNetwork } from './network.ts';
import { installNetworkLink, RELAY_NETWORK, type LinkScope } from './network-link.ts';
import { loadedEmulator } from './testing/v86-emulator.ts';

// v86's own Wisp adapter and TCP stack (the real ones, from its wasm build), behind the network
// link as in the VM worker; the relay is a fake socket and the guest is these frames.

const NET: VmNetwork = { relayUrl: 'ws://proxy.test/v1/wisp?ticket=t', dnsUrl: 'http://proxy.test/dns-query', ticket: 't' };
const SERVER = [10, 0, 0, 9];
const SEGMENT = 61_440;

class FakeRelay {
  static made: FakeRelay[] = [];
  binaryType = 'blob';
  sent: Uint8Array[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: ArrayBuffer }) => void) | null = null;
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeRelay.made.push(this);
  }
  send(data: Uint8Array) {
    this.sent.push(new Uint8Array(data));
  }
  close() {}
  /** A Wisp frame from the relay. */
  frame(type: number, id: number, payload: Uint8Array) {
    const bytes = new Uint8Array(5 + payload.length);
    bytes[0] = type;
    new DataView(bytes.buffer).setUint32(1, id, true);
    bytes.set(payload, 5);
    this.onmessage?.({ data: bytes.buffer });
  }
}

/** A TCP segment v86 sent the guest. */
interface ToGuest {
  seq: number;
  length: number;
}

function parse(frame: Uint8Array): ToGuest | null {
  if (frame[23] !== 6) return null;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const ip = (frame[14]! & 0x0f) * 4;
  const tcp = 14 + ip;
  return { seq: view.getUint32(tcp + 4), length: view.getUint16(16) - ip - (frame[tcp + 12]! >> 4) * 4 };
}

const saved = { WebSocket: globalThis.WebSocket, fetch: globalThis.fetch };
const made: { destroy(): Promise<void> }[] = [];
afterEach(async () => {
  for (const emulator of made.splice(0)) await emulator.destroy();
  globalThis.WebSocket = saved.WebSocket;
  globalThis.fetch = saved.fetch;
});

/** A connection from the guest to SERVER:80 through the relay, established; `toGuest`: v86's data segments. */
async function connected() {
  FakeRelay.made = [];
  (globalThis as { WebSocket?: unknown }).WebSocket = FakeRelay;
  const link = installNetworkLink(globalThis as LinkScope, () => {});
  link.set(NET);
  const emulator = await loadedEmulator<EmulatorLike & { bus: { pair: { send(event: string, data: Uint8Array): void } } }>({ net_device: netDevice(RELAY_NETWORK) });
  made.push(emulator);
  link.attach(emulator);
  const adapter = emulator.network_adapter as { receive(frame: Uint8Array): void };
  const toGuest: ToGuest[] = [];
  // What v86 hands the card (its bus would write it into the guest's memory).
  adapter.receive = (frame) => {
    const segment = parse(new Uint8Array(frame));
    if (segment && segment.length > 0) toGuest.push(segment);
  };
  const relay = FakeRelay.made.at(-1)!;
  relay.onopen?.();
  relay.frame(3, 0, Uint8Array.of(128, 0, 0, 0)); // CONTINUE: the relay's buffer size
  // The card's frames reach the adapter over v86's bus, as the guest sends them.
  const card = (segment: Parameters<typeof tcpFrame>[2]) => emulator.bus.pair.send('net0-send', tcpFrame(SERVER, 80, segment));
  card({ seq: 1000, flags: TCP.SYN, window: 65_480 });
  const opened = relay.sent.find((frame) => frame[0] === 1);
  expect(opened, 'the adapter opened a stream on the relay').toBeDefined();
  const stream = new DataView(opened!.buffer).getUint32(1, true);
  // v86 answers the SYN with sequence number 1337; its data starts at 1338.
  card({ seq: 1001, ack: 1338, flags: TCP.ACK, window: 65_480 });
  return { relay, stream, card, toGuest };
}

describe('a download through the relay into a guest that fell behind', () => {
  it('sends the segment the guest dropped into its closed window again once the window opens', async () => {
    const { relay, stream, card, toGuest } = await connected();
    relay.frame(2, stream, new Uint8Array(SEGMENT));
    relay.frame(2, stream, new Uint8Array(SEGMENT));
    expect(toGuest).toEqual([{ seq: 1338, length: SEGMENT }]);

    // The guest takes the first segment but has no room left: v86 sends the second all the same,
    // and the guest drops it (its acknowledgement does not move).
    const next = 1338 + SEGMENT;
    card({ seq: 1001, ack: next, flags: TCP.ACK, window: 0 });
    expect(toGuest.at(-1)).toEqual({ seq: next, length: SEGMENT });
    card({ seq: 1001, ack: next, flags: TCP.ACK, window: 0 });
    expect(toGuest).toHaveLength(2);

    // Its reader caught up: the window update brings the dropped segment again.
    card({ seq: 1001, ack: next, flags: TCP.ACK, window: 65_480 });
    expect(toGuest).toHaveLength(3);
    expect(toGuest.at(-1)).toEqual({ seq: next, length: SEGMENT });

    // Taken this time; the download goes on with new data.
    card({ seq: 1001, ack: next + SEGMENT, flags: TCP.ACK, window: 65_480 });
    relay.frame(2, stream, new Uint8Array(1000));
    expect(toGuest.at(-1)).toEqual({ seq: next + SEGMENT, length: 1000 });
  });

  it('sends nothing again for an acknowledgement that repeats while the window stays open', async () => {
    const { relay, stream, card, toGuest } = await connected();
    relay.frame(2, stream, new Uint8Array(SEGMENT));
    relay.frame(2, stream, new Uint8Array(SEGMENT));
    const next = 1338 + SEGMENT;
    card({ seq: 1001, ack: next, flags: TCP.ACK, window: 65_480 });
    card({ seq: 1001, ack: next, flags: TCP.ACK, window: 65_480 });
    card({ seq: 1001, ack: next, flags: TCP.ACK, window: 30_000 });
    expect(toGuest).toEqual([
      { seq: 1338, length: SEGMENT },
      { seq: next, length: SEGMENT },
    ]);
  });
});
