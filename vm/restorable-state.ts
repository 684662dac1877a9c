// A saved state handed to v86 as a file of its own kind, so its bytes can be dropped once restored.

/**
 * A saved state as v86 loads a file of its own kind (it tells one by `get`, `set` and `load`, and
 * takes a state's `buffer` once loaded), which can let go of the bytes.
 */
export interface RestorableState {
  buffer: ArrayBuffer | undefined;
  onload: ((event: { buffer: ArrayBuffer | undefined }) => void) | undefined;
  load(): void;
  get(start: number, length: number, done: (bytes: Uint8Array) => void): void;
  set(): void;
  /** Drops the bytes, once the emulator has restored them. */
  release(): void;
  /** Called as v86 loads it (its CPU made, the state not yet restored). */
  loading?: () => void;
}

/**
 * A state to restore that the emulator does not keep: v86 holds on to the files it loaded (and a
 * `{ buffer }` state with them) for as long as it runs, 50-60 MB of a tab's memory for nothing once
 * the state is in the guest's RAM. Released when the emulator starts (createEmulator): dropped, not
 * let go of (a state read from storage is the browser's buffer, see let-go.ts).
 */
export function restorable(state: ArrayBuffer): RestorableState {
  return {
    buffer: state,
    onload: undefined,
    load() {
      this.loading?.();
      this.onload?.({ buffer: this.buffer });
    },
    get(start, length, done) {
      done(new Uint8Array(this.buffer!, start, length));
    },
    set() {
      throw new Error('a saved state is not written to');
    },
    release() {
      this.buffer = undefined;
    },
  };
}
