import { describe, expect, it } from 'vitest';
import { formatDuration, formatSpend, formatTokens } from './format.ts';

describe('chat formats', () => {
  it('words tokens, spend and durations', () => {
    expect(formatTokens(1)).toBe('1 token');
    expect(formatTokens(12_345)).toBe('12,345 tokens');
    expect(formatSpend({ tokens: 150, cost_usd: 0.00081 })).toBe('150 tokens · $0.0008');
    expect(formatSpend({ tokens: 150, cost_usd: 1.5 })).toBe('150 tokens · $1.50');
    expect(formatSpend({ tokens: 150, cost_usd: null }, ' · cost unknown')).toBe('150 tokens · cost unknown');
    expect(formatDuration(340)).toBe('340 ms');
    expect(formatDuration(1_250)).toBe('1.3 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });
});
