import { describe, expect, it } from 'vitest';
import { compileOnePagePerModule } from './jit.ts';
import { loadedEmulator } from './testing/v86-emulator.ts';

describe('compileOnePagePerModule', () => {
  it("sets v86's MAX_PAGES to one in a real emulator, whose default is three", async () => {
    const emulator = await loadedEmulator<{ v86: { cpu: { wm: { exports: { get_jit_config(index: number): number } } } } }>();
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
