// The traffic counter on v86's own bus (a real emulator, no guest: frames are delivered to its
// network card the way the Wisp adapter does) and summed over several emulators.
import { describe, expect, it } from 'vitest';
import { fakeEmulatorFactory, type FakeEmulator } from './testing/fake-guest.ts';
import type { EmulatorLike } from './emulator.ts';
import { netDevice } from './emulator-options.ts';
import { loadedEmulator } from './testing/v86-emulator.ts';
import { createTrafficCounter } from './traffic.ts';

describe('createTrafficCounter', () => {
  it('counts the frames v86 delivers to the network card, which a net0-receive listener never sees', async () => {
    const emulator = await loadedEmulator<EmulatorLike>({ net_device: { ...netDevice(null), relay_url: 'fetch' } });
    try {
      const counter = createTrafficCounter();
      counter.attach(emulator);
      let heardReceive = 0;
      emulator.add_listener('net0-receive', (() => heardReceive++) as (value: never) => void);
      // What v86's network adapters do with a frame from the relay.
      emulator.bus.send('net0-receive', new Uint8Array(1500));
      emulator.bus.send('net0-receive', new Uint8Array(60));
      expect(counter.totals()).toEqual({ sent: 0, received: 1560 });
      expect(heardReceive).toBe(0);
    } finally {
      await emulator.destroy();
    }
  });

  it('sums every emulator it was attached to (a boot, then a wake), and ignores malformed lengths', () => {
    const created: FakeEmulator[] = [];
    const make = fakeEmulatorFactory(created, { silent: true });
    const counter = createTrafficCounter();
    counter.attach(make({}));
    counter.attach(make({}));
    const [first, second] = created;
    first!.fire('eth-transmit-end', [74]);
    first!.fire('eth-receive-end', [1514]);
    second!.fire('eth-transmit-end', [66]);
    second!.fire('eth-receive-end', [60]);
    for (const bad of [undefined, [], [-1], ['9'], [Number.NaN]]) second!.fire('eth-receive-end', bad);
    expect(counter.totals()).toEqual({ sent: 140, received: 1574 });
    // A copy: the caller cannot change the counts.
    counter.totals().sent = 0;
    expect(counter.totals().sent).toBe(140);
  });
});
