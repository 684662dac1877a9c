// How often v86 gives the VM worker back to its event loop. v86's main loop runs the guest for
// ~1 ms, then yields: at once while the guest runs, or, once it halts (`hlt`, an idle kernel), for
// the milliseconds until its next timer. In a browser every yield is a message to v86's helper
// worker and one back (the helper keeps the timer), ~3 KB of garbage per round trip until a
// collection (20,000 of them left a renderer 60 MB larger). A running guest made ~1,000 of them a
// second, an idle one ~250 (its kernel ticks 250 times a second even when idle: Debian's 686
// kernel has no NO_HZ, `nohz_mode` 0 in /proc/timer_list), plus, before, dozens for each tick's
// last fraction of a millisecond (a wait under 1 ms was a yield at once, repeated until due).
//
// Here, for the emulator it covers:
// - a wait under 1 ms is waited out in place (the worker blocked that long at most), then v86
//   goes on at once: one yield per timer instead of dozens;
// - a guest that ran its whole slice runs up to `SLICES` slices (~4 ms) before the event loop
//   has the worker again, so messages to the VM worker (a command, a key, a disk read done) wait
//   3 ms longer at most;
// - an idle tick's wait (3 ms or more) is a timer of this worker's own, with no helper round trip;
//   a shorter one stays with the helper, whose timers are not held to the 4 ms a chain of
//   timers is clamped to (the guest's short timers came late otherwise: see below).
// A device's interrupt still ends a wait at once (v86 wakes a halted CPU through its own
// `next_tick(0)`, which is never run in place here: only the yield right after a slice is).
//
// Measured, 2026-12-04 (`npm run bench -- app.renderer`, the renderer after the computer ran
// `import pandas` and two scans were read): 457, 462, 463 and 461 MB, `import pandas` in the app's
// terminal 21.4 s. The build before, the same afternoon: 488 and 574 MB, 22.4 s. Each half alone:
// the four slices, waits through the helper, 490 MB (one run); the own timers, one slice per
// yield, 470, 577 and 574 MB (22.4-24.0 s). The cost, in Node (against the own timers alone): a
// message to a running guest waits up to 3 ms longer, `vm.exec_rtt` 33 -> 46 and 47 ms p50,
// `vm.disk_write` 80 -> 43 and 41 MB/s. Likely why: v86 puts each compiled module in place from the
// event loop (the compile's promise), and until then runs that code interpreted; with no chaining
// while a compile is in flight (codegen_finalize to codegen_finalize_finished), Node gave 35 ms
// and 69 MB/s, but the renderer 538 MB (after pandas 547, one run; `import pandas` 20.8 s): not
// taken, as the compiles of an import are most of its time.
// 2026-12-03, the first point alone: the computer idle in the app (ready, its image downloaded,
// 20 s): the renderer took 29% of a core (the VM worker 14, v86's helper 12) and swung 417-448 MB
// between collections, then 6-26% (the helper 1-2) at 351-375 MB. In Node
// (`npm run bench -- vm`, one run each, one after the other): `vm.cold_boot` 8.7 -> 6.4 s,
// `vm.exec_rtt` 41 -> 28 ms, the warm runner 56 -> 46 ms, `vm.wake` 349 -> 293 ms,
// `vm.kernel_boot` 19.5 -> 15.8 s.
// Tried and not taken: a halted guest waiting at least 1 ms, through the helper's timer (the
// guest's short timers came late: `vm.cold_boot` 12.2 s, `vm.exec_rtt` 65 ms, disk writes 59 -> 26
// MB/s); every wait of 1 ms or more as a timer in the VM worker instead of the helper (the
// renderer after `import pandas` 542-598 MB against 480-496).

/** The parts of v86's emulator (`emulator.v86`) that yield and run the guest. */
interface V86Loop {
  yield(t: number, tick: number): void;
  yield_callback(tick: number): void;
  unregister_yield(): void;
  cpu: { main_loop(): number };
}

/** Slices of ~1 ms a running guest is given before the worker's event loop runs again. */
export const SLICES = 4;
/** The shortest halted wait kept as this worker's own timer (an idle tick's ~4 ms). */
export const OWN_TIMER_MS = 3;

export interface YieldTimers {
  now(): number;
  setTimeout(run: () => void, ms: number): void;
}

const realTimers: YieldTimers = {
  now: () => performance.now(),
  setTimeout: (run, ms) => void setTimeout(run, ms),
};

const covered = new WeakSet<object>();

/**
 * Has v86 yield less often (above). Call it once the emulator exists (`emulator-loaded`), before
 * the guest runs; again does nothing. False for an emulator without v86's loop (a test's stand-in
 * of another shape).
 */
export function yieldLessOften(emulator: unknown, timers: YieldTimers = realTimers): boolean {
  const inner = (emulator as { v86?: Partial<V86Loop> }).v86;
  if (typeof inner?.yield !== 'function' || typeof inner.yield_callback !== 'function' || typeof inner.unregister_yield !== 'function' || typeof inner.cpu?.main_loop !== 'function') return false;
  const v86 = inner as V86Loop;
  if (covered.has(v86)) return true;
  covered.add(v86);
  const yieldFor = v86.yield;
  const mainLoop = v86.cpu.main_loop;
  // Set when a slice has just ended: v86's do_tick runs main_loop, then next_tick, then yield.
  let sliceEnded = false;
  let depth = 0;
  // v86's destroy ends its helper, and with it the helper's timers; this worker's own end here.
  let ended = false;
  const unregister = v86.unregister_yield;
  v86.unregister_yield = function () {
    ended = true;
    unregister.call(this);
  };
  v86.cpu.main_loop = function () {
    const t = mainLoop.call(this);
    sliceEnded = true;
    return t;
  };
  // main_loop gives 0 when the guest ran its slice, else the ms until the halted guest's next timer.
  v86.yield = function (t, tick) {
    const afterSlice = sliceEnded;
    sliceEnded = false;
    if (t > 0 && t < 1) {
      const due = timers.now() + t;
      while (timers.now() < due);
      t = 0;
    }
    if (t === 0 && afterSlice && depth < SLICES - 1) {
      depth++;
      try {
        this.yield_callback(tick);
      } finally {
        depth--;
      }
      return;
    }
    if (t >= OWN_TIMER_MS) {
      timers.setTimeout(() => {
        if (!ended) this.yield_callback(tick);
      }, t);
      return;
    }
    yieldFor.call(this, t, tick);
  };
  return true;
}
