// How v86 compiles the guest's hot code. Its JIT makes one WebAssembly module for each hot entry
// page, and by default (MAX_PAGES 3) puts in it the basic blocks of up to two more pages that
// code jumps to: the same block is compiled again into every module that reaches it. In this
// renderer each module's code and V8's bookkeeping for it stay while the module is cached (up to
// 899 of them), so that duplication is memory the tab holds for the whole session.
//
// Measured in the app (production build, Chromium 156, two cores), `import pandas` in a fresh
// computer, then again:
//   MAX_PAGES 3 (v86's default): 72 s, again 48 s; renderer 550 MB after (compiled code 91 MB)
//   MAX_PAGES 1:                 46 s, again 39 s; renderer 516 MB after (compiled code 58 MB)
//   MAX_PAGES 1, 50 extra blocks: 96 s, again 73 s; 444 MB (smaller modules, each ends sooner)
// In Node (the same wasm), alternating, a cold boot from the kernel then `import pandas`:
//   MAX_PAGES 3: boot 17.3 s and 21.2 s, import 55.3 s and 55.0 s
//   MAX_PAGES 1: boot 13.7 s and 14.0 s, import 44.2 s and 38.8 s
// One page per module: less code, and no slower (a jump to another page goes through v86's
// dispatch, which costs less than compiling the other page again and again).

/** The part of v86's CPU (`emulator.v86.cpu`) that holds its wasm exports. */
interface V86JitExports {
  wm: { exports: { set_jit_config(index: number, value: number): void; get_jit_config(index: number): number } };
}

/** v86's `set_jit_config` index of MAX_PAGES (src/rust/jit.rs). */
const MAX_PAGES = 1;

/**
 * Has v86 compile each module from one page of guest code. Call it once the emulator has its CPU
 * (`emulator-loaded`); the setting is v86's runtime one, not part of a saved state. False for an
 * emulator without v86's JIT exports (a test's stand-in).
 */
export function compileOnePagePerModule(emulator: unknown): boolean {
  const exports = (emulator as { v86?: { cpu?: Partial<V86JitExports> } }).v86?.cpu?.wm?.exports;
  if (typeof exports?.set_jit_config !== 'function') return false;
  exports.set_jit_config(MAX_PAGES, 1);
  return exports.get_jit_config(MAX_PAGES) === 1;
}
