import { join } from 'node:path';
import { V86 } from 'v86';
import { describe, expect, it } from 'vitest';
import { compileOnePagePerModule } from './jit.ts';
import { nodeV86Wasm } from './node-file.ts';

const WASM_PATH = join(import.meta.dirname, '..', 'node_modules', 'v86', 'build', 'v86.wasm');

describe('compileOnePagePerModule', () => {
  it("sets v86's MAX_PAGES to one in a real emulator, whose default is three", async () => {
    const emulator = new V86({ wasm_fn: nodeV86Wasm(WASM_PATH), memory_size: 16 * 1024 * 1024, autostart: false, disable_keyboard: true, disable_mouse: true, disable_speaker: true } as never) as unknown as {
      add_listener(event: string, listener: () => void): void;
      destroy(): Promise<void>;
      v86: { cpu: { wm: { exports: { get_jit_config(index: number): number } } } };
    };
    await new Promise<void>((resolve) => emulator.add_listener('emulator-loaded', resolve));
    try {
      const { exports } = emulator.v86.cpu.wm;
      expect(exports.get_jit_config(1)).toBe(3);
      expect(compileOnePagePerModule(emulator)).toBe(true);
      expect(exports.get_jit_config(1)).toBe(1);
    } finally {
      await emulator.destroy();
    }
  });

  it('leaves an emulator without v86 exports (a stand-in) alone', () => {
    expect(compileOnePagePerModule({})).toBe(false);
    expect(compileOnePagePerModule({ v86: { cpu: {} } })).toBe(false);
  });
});
