import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './errors.ts';

describe('retryDelayMs', () => {
  it('uses the server retry-after when present, capped at a minute', () => {
    expect(retryDelayMs(1, 2000)).toBe(2000);
    expect(retryDelayMs(3, 0)).toBe(0);
    expect(retryDelayMs(1, 600_000)).toBe(60_000);
  });
  it('backs off exponentially with jitter otherwise', () => {
    expect(retryDelayMs(1, undefined, () => 0.5)).toBe(500);
    expect(retryDelayMs(2, undefined, () => 0.5)).toBe(1000);
    expect(retryDelayMs(3, undefined, () => 0)).toBe(1500);
    expect(retryDelayMs(10, undefined, () => 1)).toBe(10_000);
  });
});
