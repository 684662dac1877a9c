import { describe, expect, it } from 'vitest';
import { addUsage, priceFor, usageOf } from './pricing.ts';

describe('pricing', () => {
  it('prices a call by model family, cache tokens included', () => {
    const usage = usageOf({ input_tokens: 1000, output_tokens: 500, cache_creation_input_tokens: 2000, cache_read_input_tokens: 10_000 }, 'claude-sonnet-5-5');
    // 1000*3 + 500*15 + 2000*3.75 + 10000*0.3 = 3000 + 7500 + 7500 + 3000 = 21000 per million
    expect(usage.cost_usd).toBeCloseTo(0.021, 10);
    expect(priceFor('claude-haiku-4-5')?.input).toBe(1);
    expect(priceFor('claude-opus-4-1')?.input).toBe(15);
    expect(priceFor('claude-opus-4-5')?.input).toBe(5);
  });
  it('says the cost is unknown for a model it does not know, and keeps it unknown in sums', () => {
    const local = usageOf({ input_tokens: 10, output_tokens: 10 }, 'llama-3-8b');
    expect(local.cost_usd).toBeNull();
    expect(addUsage(usageOf({ input_tokens: 1, output_tokens: 1 }, 'claude-sonnet-4-6'), local).cost_usd).toBeNull();
    expect(addUsage(local, local).input_tokens).toBe(20);
  });
});
