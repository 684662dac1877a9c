import { describe, expect, it } from 'vitest';
import { binaryBytes, isAppShortcut } from './useXterm.ts';

const key = (init: Partial<KeyboardEvent>) => ({ ctrlKey: false, metaKey: false, altKey: false, key: '', code: '', ...init }) as KeyboardEvent;

describe('the terminal keyboard', () => {
  it('leaves the app its shortcuts and gives the shell everything else, Esc included', () => {
    expect(isAppShortcut(key({ ctrlKey: true, key: 'k' }))).toBe(true);
    expect(isAppShortcut(key({ metaKey: true, key: 'K' }))).toBe(true);
    expect(isAppShortcut(key({ altKey: true, code: 'BracketRight' }))).toBe(true);
    expect(isAppShortcut(key({ key: 'Escape', code: 'Escape' }))).toBe(false);
    expect(isAppShortcut(key({ ctrlKey: true, key: 'c' }))).toBe(false);
  });

  it('sends binary input byte for byte, not as UTF-8', () => {
    expect(Array.from(binaryBytes('\x1b[M\xff\x80'))).toEqual([0x1b, 0x5b, 0x4d, 0xff, 0x80]);
  });
});
