// How v86 waits while the guest is halted. Between slices of guest code v86 yields to the event
// loop: at once while the guest runs, or, once the guest halts (`hlt`, an idle kernel), for the
// milliseconds until its next timer fires. A wait under 1 ms was a yield at once, repeated until
// the timer was due. The guest's kernel ticks 250 times a second even when idle (Debian's 686
// kernel: `nohz_mode` 0 in /proc/timer_list, `nohz=on` changes nothing), so the last part of every
// 4 ms went round that loop: in Node 51,000 yields a second. In a browser each is a message to
// v86's helper worker and one back, ~3 KB of garbage per round trip (20,000 of them left a
// renderer 60 MB larger until collected).
//
// Here a wait under 1 ms is waited out where it is (the worker is blocked that long at most),
// then v86 yields once at once: one round trip per timer instead of dozens. A device's interrupt
// still ends a longer wait at once (v86 wakes a halted CPU when one is raised).
//
// Measured, 2026-12-03: the computer idle in the app (ready, its image downloaded, 20 s): the
// renderer took 29% of a core (the VM worker 14, v86's helper 12) and swung 417-448 MB between
// collections; now 6-26% (the helper 1-2) at 351-375 MB. In Node (`npm run bench -- vm`, one run
// each, one after the other): `vm.cold_boot` 8.7 -> 6.4 s, `vm.exec_rtt` 41 -> 28 ms, the warm
// runner 56 -> 46 ms, `vm.wake` 349 -> 293 ms, `vm.kernel_boot` 19.5 -> 15.8 s.
// Tried and not taken: a halted guest waiting at least 1 ms, through the helper's timer (the
// guest's short timers came late: `vm.cold_boot` 12.2 s, `vm.exec_rtt` 65 ms, disk writes 59 -> 26
// MB/s); every wait of 1 ms or more as a timer in the VM worker instead of the helper (the
// renderer after `import pandas` 542-598 MB against 480-496).

/** The part of v86's emulator (`emulator.v86`) that yields. */
interface V86Yielding {
  yield(t: number, tick: number): void;
}

const covered = new WeakSet<object>();

/**
 * Has a halted guest whose timer is due within 1 ms wait for it here rather than through
 * repeated yields. Call it once the emulator exists (`emulator-loaded`), before the guest runs;
 * again does nothing. False for an emulator without v86's yield (a test's stand-in).
 */
export function waitWhenHalted(emulator: unknown, now: () => number = () => performance.now()): boolean {
  const inner = (emulator as { v86?: Partial<V86Yielding> }).v86;
  if (typeof inner?.yield !== 'function') return false;
  const v86 = inner as V86Yielding;
  if (covered.has(v86)) return true;
  covered.add(v86);
  const yieldFor = v86.yield;
  // v86's main loop gives 0 when the guest ran its slice, else the ms until the halted guest's
  // next timer.
  v86.yield = function (t, tick) {
    if (t > 0 && t < 1) {
      const due = now() + t;
      while (now() < due);
      t = 0;
    }
    yieldFor.call(this, t, tick);
  };
  return true;
}
