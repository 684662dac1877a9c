import { describe, expect, it } from 'vitest';
import { waitWhenHalted } from './halt-wait.ts';
import { loadedEmulator } from './testing/v86-emulator.ts';

/** v86's yielding part, recording what it was asked and when (a clock the test moves). */
function standIn() {
  let clock = 0;
  const asked: { t: number; tick: number; at: number }[] = [];
  const inner = {
    yield(t: number, tick: number) {
      asked.push({ t, tick, at: clock });
    },
  };
  // Each reading of the clock moves it on 0.1 ms, as a spinning loop's readings would.
  const now = () => (clock = Math.round((clock + 0.1) * 10) / 10);
  return { emulator: { v86: inner }, inner, asked, now };
}

describe('waitWhenHalted', () => {
  it('waits out a timer due within 1 ms, then yields once at once', () => {
    const { emulator, inner, asked, now } = standIn();
    expect(waitWhenHalted(emulator, now)).toBe(true);
    inner.yield(0.5, 1);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.t).toBe(0);
    expect(asked[0]!.tick).toBe(1);
    expect(asked[0]!.at).toBeGreaterThanOrEqual(0.6); // 0.1 when asked, due at 0.6
  });

  it('leaves a yield at once (the guest ran) and a wait of 1 ms or more to v86', () => {
    const { emulator, inner, asked, now } = standIn();
    waitWhenHalted(emulator, now);
    inner.yield(0, 1);
    inner.yield(1, 2);
    inner.yield(37.5, 3);
    expect(asked).toEqual([
      { t: 0, tick: 1, at: 0 },
      { t: 1, tick: 2, at: 0 },
      { t: 37.5, tick: 3, at: 0 },
    ]);
  });

  it('covers an emulator once, and leaves one without v86 yield (a stand-in) alone', () => {
    const { emulator, inner, asked, now } = standIn();
    waitWhenHalted(emulator, now);
    waitWhenHalted(emulator, now);
    inner.yield(0.2, 1);
    expect(asked.map(({ t, tick }) => [t, tick])).toEqual([[0, 1]]);
    expect(waitWhenHalted({})).toBe(false);
    expect(waitWhenHalted({ v86: {} })).toBe(false);
  });

  it("finds v86's yield under its own name in a real emulator", async () => {
    const emulator = await loadedEmulator<{ v86: { yield: unknown } }>();
    try {
      const before = emulator.v86.yield;
      expect(waitWhenHalted(emulator)).toBe(true);
      expect(emulator.v86.yield).not.toBe(before);
    } finally {
      await emulator.destroy();
    }
  });
});
