import { describe, expect, it } from 'vitest';
import { computerChipText, percent, seconds } from './computer-status.ts';

describe('computerChipText', () => {
  it('words each state for the header chip', () => {
    expect(computerChipText({ state: 'downloading', progress: 0.424, detail: 'disk' })).toBe('downloading 42%');
    expect(computerChipText({ state: 'waking' })).toBe('waking…');
    expect(computerChipText({ state: 'booting', detail: '' })).toBe('booting…');
    expect(computerChipText({ state: 'ready', woke: true, wake_ms: 612 })).toBe('ready (woke in 0.6 s)');
    expect(computerChipText({ state: 'ready', woke: false, wake_ms: 13_240 })).toBe('ready (booted in 13.2 s)');
    expect(computerChipText({ state: 'ready', woke: true, wake_ms: null })).toBe('ready');
    expect(computerChipText({ state: 'suspended' })).toBe('suspended');
    expect(computerChipText({ state: 'error', message: 'x', can_reboot: true })).toBe('error');
    expect(computerChipText({ state: 'off' })).toBe('off');
    expect(computerChipText({ state: 'unavailable', message: 'no image' })).toBe('unavailable');
  });

  it('clamps progress and keeps a fast wake from reading 0.0 s', () => {
    expect([percent(-1), percent(1.3), percent(Number.NaN), percent(0.995)]).toEqual([0, 100, 0, 100]);
    expect([seconds(42), seconds(0), seconds(980)]).toEqual(['0.04', '0.0', '1.0']);
  });
});
