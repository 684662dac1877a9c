// The computer's network traffic since this worker started: the bytes of the Ethernet frames its
// card sent and received, summed over every emulator attached to it (boots, wakes, reboots).
import type { EmulatorLike } from './emulator.ts';

/** Frame bytes: `sent` by the guest, `received` by it (both since this worker started). */
export interface NetTraffic {
  sent: number;
  received: number;
}

export interface TrafficCounter {
  /** Counts a new emulator's frames from now on (until it is destroyed). */
  attach(emulator: EmulatorLike): void;
  totals(): NetTraffic;
}

// The network card (virtio-net, like ne2k) reports each frame's length on the emulator's side of
// v86's bus once it handled it. `net0-receive` itself cannot be used: the adapter sends it from
// that same side, so it reaches only the card, never a listener added with `add_listener`. A frame
// that arrives while the guest has no receive buffer posted is counted though dropped (rare).
const SENT = 'eth-transmit-end';
const RECEIVED = 'eth-receive-end';

/** `counting`: whether frames count now (only while a relay is behind the card). */
export function createTrafficCounter(counting: () => boolean = () => true): TrafficCounter {
  const totals: NetTraffic = { sent: 0, received: 0 };
  const length = (value: unknown): number => {
    const bytes = Array.isArray(value) ? value[0] : undefined;
    return typeof bytes === 'number' && Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
  };
  return {
    attach(emulator) {
      emulator.add_listener(SENT, ((value: unknown) => void (counting() && (totals.sent += length(value)))) as (value: never) => void);
      emulator.add_listener(RECEIVED, ((value: unknown) => void (counting() && (totals.received += length(value)))) as (value: never) => void);
    },
    totals: () => ({ ...totals }),
  };
}
