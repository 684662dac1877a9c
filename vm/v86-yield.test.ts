import { describe, expect, it } from 'vitest';
import { loadedEmulator } from './testing/v86-emulator.ts';
import { OWN_TIMER_MS, SLICES, yieldLessOften, type YieldTimers } from './v86-yield.ts';

/**
 * v86's loop as its main.js has it (do_tick, next_tick, yield_callback), its CPU's main_loop
 * giving `slices` in turn (0: the guest ran its slice; else the ms until a halted guest's timer),
 * its helper's yields recorded, and a clock and timers the test moves.
 */
function standIn(slices: number[]) {
  let clock = 0;
  const helper: { t: number; tick: number }[] = [];
  const timers: { ms: number; run: () => void }[] = [];
  const v86 = {
    tick_counter: 0,
    running: true,
    stopping: false,
    slicesRun: 0,
    ended: false,
    cpu: {
      main_loop: () => {
        v86.slicesRun++;
        return slices.shift() ?? 50;
      },
    },
    do_tick() {
      if (this.stopping || !this.running) return;
      this.next_tick(this.cpu.main_loop());
    },
    next_tick(t: number) {
      this.yield(t, ++this.tick_counter);
    },
    yield_callback(tick: number) {
      if (tick === this.tick_counter) this.do_tick();
    },
    yield(t: number, tick: number) {
      helper.push({ t, tick });
    },
    unregister_yield() {
      this.ended = true;
    },
  };
  // Each reading of the clock moves it on 0.1 ms, as a spinning loop's readings would.
  const clocks: YieldTimers = {
    now: () => (clock = Math.round((clock + 0.1) * 10) / 10),
    setTimeout: (run, ms) => void timers.push({ ms, run }),
  };
  /** The helper answers the last yield it was asked for. */
  const answer = () => v86.yield_callback(helper.at(-1)!.tick);
  return { emulator: { v86 }, v86, helper, timers, clocks, answer, clock: () => clock };
}

describe('yieldLessOften', () => {
  it(`runs a running guest ${SLICES} slices at a time between yields to the event loop`, () => {
    const { emulator, v86, helper, clocks, answer } = standIn(Array(3 * SLICES).fill(0));
    expect(yieldLessOften(emulator, clocks)).toBe(true);
    v86.next_tick(0); // v86's start
    expect(helper).toHaveLength(1);
    answer();
    expect(v86.slicesRun).toBe(SLICES);
    expect(helper).toHaveLength(2);
    expect(helper[1]!.t).toBe(0);
    answer();
    expect(v86.slicesRun).toBe(2 * SLICES);
    expect(helper).toHaveLength(3);
  });

  it("never runs the guest in place for a yield that does not follow a slice (a device waking a halted CPU)", () => {
    const { emulator, v86, helper, clocks } = standIn([0, 0]);
    yieldLessOften(emulator, clocks);
    v86.next_tick(0); // as v86's stop_idling does, from a device's event
    v86.next_tick(0);
    expect(v86.slicesRun).toBe(0);
    expect(helper.map(({ t }) => t)).toEqual([0, 0]);
  });

  it(`waits an idle tick (${OWN_TIMER_MS} ms or more) on its own timer, a shorter wait through v86's helper`, () => {
    const { emulator, v86, helper, timers, clocks, answer } = standIn([3.9, 2, 0]);
    yieldLessOften(emulator, clocks);
    v86.next_tick(0);
    answer(); // the guest halts, its tick 3.9 ms away
    expect(helper).toHaveLength(1);
    expect(timers.map(({ ms }) => ms)).toEqual([3.9]);
    timers[0]!.run(); // its timer is due; the guest halts again, a timer 2 ms away
    expect(v86.slicesRun).toBe(2);
    expect(helper.map(({ t }) => t)).toEqual([0, 2]);
    expect(timers).toHaveLength(1);
  });

  it('waits out a timer due within 1 ms in place, then runs the guest at once', () => {
    const { emulator, v86, helper, clocks, answer, clock } = standIn([0.5, 50]);
    yieldLessOften(emulator, clocks);
    v86.next_tick(0);
    answer();
    expect(v86.slicesRun).toBe(2);
    expect(clock()).toBeGreaterThanOrEqual(0.6); // 0.1 when asked, due at 0.6
    expect(helper).toHaveLength(1);
  });

  it("drops its own timers once v86 ends (its destroy ends the helper's)", () => {
    const { emulator, v86, timers, clocks, answer } = standIn([10, 0]);
    yieldLessOften(emulator, clocks);
    v86.next_tick(0);
    answer();
    expect(timers).toHaveLength(1);
    v86.unregister_yield();
    expect(v86.ended).toBe(true);
    timers[0]!.run();
    expect(v86.slicesRun).toBe(1);
  });

  it("covers an emulator once, and leaves one without v86's loop (a stand-in) alone", () => {
    const { emulator, v86, helper, clocks, answer } = standIn(Array(4 * SLICES).fill(0));
    yieldLessOften(emulator, clocks);
    yieldLessOften(emulator, clocks);
    v86.next_tick(0);
    answer();
    expect(v86.slicesRun).toBe(SLICES);
    expect(helper).toHaveLength(2);
    expect(yieldLessOften({})).toBe(false);
    expect(yieldLessOften({ v86: { yield() {} } })).toBe(false);
  });

  it("finds v86's loop under its own names in a real emulator", async () => {
    const emulator = await loadedEmulator<{ v86: { yield: unknown; cpu: { main_loop: unknown } } }>();
    try {
      const before = [emulator.v86.yield, emulator.v86.cpu.main_loop];
      expect(yieldLessOften(emulator)).toBe(true);
      expect(emulator.v86.yield).not.toBe(before[0]);
      expect(emulator.v86.cpu.main_loop).not.toBe(before[1]);
    } finally {
      await emulator.destroy();
    }
  });
});
