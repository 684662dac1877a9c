// How the chat words amounts: tokens, dollars, durations. Pure, so it is unit tested.
import type { Spend } from '../connection/events.ts';

export function formatTokens(tokens: number): string {
  return `${new Intl.NumberFormat('en-US').format(tokens)} token${tokens === 1 ? '' : 's'}`;
}

export function formatCost(usd: number): string {
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** "1,234 tokens · $0.0120"; the cost is left out when the price is unknown. */
export function formatSpend(spend: Spend, unknownCost = ''): string {
  return `${formatTokens(spend.tokens)}${spend.cost_usd !== null ? ` · ${formatCost(spend.cost_usd)}` : unknownCost}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
