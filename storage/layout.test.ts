import { describe, expect, it } from 'vitest';
import { checkStackId, isStackId, isSystemPath, normalizeStackPath, STACK_PATHS } from './layout.ts';

describe('the stack folder layout', () => {
  it('puts the system folders under .os/', () => {
    for (const path of [STACK_PATHS.memory, STACK_PATHS.config, STACK_PATHS.vm, STACK_PATHS.checkpoints, STACK_PATHS.snapshot, STACK_PATHS.skills]) {
      expect(isSystemPath(path)).toBe(true);
    }
    for (const dir of STACK_PATHS.userSpace) expect(isSystemPath(`${dir}/x.pdf`)).toBe(false);
  });

  it('takes a stack id only when it is a safe folder name', () => {
    expect(isStackId('default')).toBe(true);
    expect(isStackId('s-1a2b3c4d')).toBe(true);
    expect(isStackId('x'.repeat(64))).toBe(true);
    for (const bad of ['', '-x', '_x', '../x', 'a/b', 'a.b', 'x'.repeat(65)]) expect(isStackId(bad)).toBe(false);
    expect(() => checkStackId('../x')).toThrow(/not a valid stack id/);
  });

  it('keeps a path inside the stack', () => {
    expect(normalizeStackPath('/documents/./a.pdf')).toBe('documents/a.pdf');
    expect(normalizeStackPath('documents\\a.pdf')).toBe('documents/a.pdf');
    expect(() => normalizeStackPath('documents/../../x')).toThrow(/leaves the stack's folder/);
    expect(isSystemPath('./.os/config/x.json')).toBe(true);
  });
});
