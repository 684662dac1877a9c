// What a model call costs, from its token usage and a price table per model family.
import type { Usage } from '../../protocol/missions.ts';

/** US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
}

// Published list prices per family; cache writes cost 1.25x input, cache reads 0.1x input.
const FAMILIES: [RegExp, Price][] = [
  [/opus-4-[01]\b|opus-4-20|claude-3-opus/, { input: 15, output: 75, cache_write: 18.75, cache_read: 1.5 }],
  [/opus/, { input: 5, output: 25, cache_write: 6.25, cache_read: 0.5 }],
  [/sonnet/, { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 }],
  [/haiku-3-5|3-5-haiku/, { input: 0.8, output: 4, cache_write: 1, cache_read: 0.08 }],
  [/haiku/, { input: 1, output: 5, cache_write: 1.25, cache_read: 0.1 }],
];

/** Null for a model the table does not know (a local model, a new family): cost is then unknown. */
export function priceFor(model: string): Price | null {
  return FAMILIES.find(([pattern]) => pattern.test(model))?.[1] ?? null;
}

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0 };
}

/** Usage of one call, with its cost (null when the model's price is unknown). */
export function usageOf(
  raw: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null },
  model: string,
): Usage {
  const usage = {
    input_tokens: raw.input_tokens,
    output_tokens: raw.output_tokens,
    cache_creation_input_tokens: raw.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: raw.cache_read_input_tokens ?? 0,
  };
  const price = priceFor(model);
  const cost = price
    ? (usage.input_tokens * price.input + usage.output_tokens * price.output + usage.cache_creation_input_tokens * price.cache_write + usage.cache_read_input_tokens * price.cache_read) / 1_000_000
    : null;
  return { ...usage, cost_usd: cost };
}

/** Sums usages; a single unknown cost makes the total unknown. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
    cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens,
    cost_usd: a.cost_usd === null || b.cost_usd === null ? null : a.cost_usd + b.cost_usd,
  };
}
