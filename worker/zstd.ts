// zstd (a WebAssembly build of the reference library): loaded once per worker, on first use. Its
// wasm is fetched beside the module and precached for offline use. Checkpoints pack the computer's
// memory with it; `.stack` files pack their entries with it.
type ZstdModule = typeof import('@bokuweb/zstd-wasm');
export type { ZstdModule };

/** How long the module may take to load before the caller falls back or fails. */
const LOAD_TIMEOUT_MS = 15_000;

let loading: Promise<ZstdModule> | null = null;

export function loadZstd(): Promise<ZstdModule> {
  loading ??= (async () => {
    const module = await import('@bokuweb/zstd-wasm');
    // The module waits for its runtime forever if the wasm never arrives: bounded here.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`zstd did not load in ${LOAD_TIMEOUT_MS / 1000} s`)), LOAD_TIMEOUT_MS);
    });
    try {
      await Promise.race([module.init(), late]);
    } finally {
      clearTimeout(timer);
    }
    return module;
  })();
  loading.catch(() => (loading = null)); // the next use tries again
  return loading;
}
