// A real v86 emulator for unit tests under Node: the same wasm the app ships, no guest unless the
// test gives one. Tests that check a setting or a patch against v86's own names use it, so a v86
// update that renames what they reach into fails here rather than in the app.
import { join } from 'node:path';
import { V86 } from 'v86';
import { nodeV86Wasm } from '../node-file.ts';

/** v86's wasm as installed (node_modules/v86/build). */
export const V86_WASM_PATH = join(import.meta.dirname, '..', '..', 'node_modules', 'v86', 'build', 'v86.wasm');

/** What every such emulator has: its events and its end. `T` adds the parts a test reaches into. */
export type LoadedEmulator<T = unknown> = T & {
  add_listener(event: string, listener: (value: never) => void): void;
  destroy(): Promise<void>;
};

/**
 * A stopped emulator with 16 MiB of RAM and no keyboard, mouse or speaker, once its CPU exists
 * (`emulator-loaded`); `options` are added to v86's and win. The caller destroys it.
 */
export async function loadedEmulator<T = unknown>(options: Record<string, unknown> = {}): Promise<LoadedEmulator<T>> {
  const emulator = new V86({
    wasm_fn: nodeV86Wasm(V86_WASM_PATH),
    memory_size: 16 * 1024 * 1024,
    autostart: false,
    disable_keyboard: true,
    disable_mouse: true,
    disable_speaker: true,
    ...options,
  } as never) as unknown as LoadedEmulator<T>;
  await new Promise<void>((resolve) => emulator.add_listener('emulator-loaded', resolve));
  return emulator;
}
