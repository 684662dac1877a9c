// A wake without committing the guest's whole RAM at once.
//
// v86 restores a saved state by zeroing all of the guest's RAM (`zero_memory(0, size)`) and then
// copying in the state's non-zero pages. In an emulator created for the wake that RAM was
// allocated a moment ago, so it is zero already — except the first MiB, where v86's init copies
// the BIOS and VGA BIOS. Zeroing 512 MiB makes the operating system commit every page of it:
// ~200 ms on a quiet 2-core machine, 500 ms and more on a busy one, most of a wake. The pages the
// state does not fill are then committed only when the guest first touches them.
//
// Only for a wake: a cold boot loads the kernel into RAM before anything is zeroed. The result is
// byte-identical guest memory (vm/fresh-memory.test.ts compares both restores of the real image).
export type WasmInstantiate = (imports: WebAssembly.Imports) => Promise<WebAssembly.Exports>;

/** Guest-physical bytes v86 writes before a restore: the BIOS (below 1 MiB) and the VGA BIOS (0xC0000). */
export const INIT_WRITTEN_BYTES = 0x100000;

/** Wraps v86's wasm instantiation so that the restore's first full zeroing covers only `INIT_WRITTEN_BYTES`. */
export function freshMemoryRestore(instantiate: WasmInstantiate): WasmInstantiate {
  return async (imports) => {
    const exports = await instantiate(imports);
    const zero = exports.zero_memory as (start: number, length: number) => void;
    let restored = false;
    return {
      ...exports,
      zero_memory(start: number, length: number) {
        if (!restored && start === 0) {
          restored = true;
          zero(0, Math.min(length, INIT_WRITTEN_BYTES));
          return;
        }
        zero(start, length);
      },
    };
  };
}
