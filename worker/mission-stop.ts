// Why a mission stopped other than by the user's hand (storage full, its token budget): a reason
// carried on its AbortSignal, so the mission ends as failed and says why.
import type { ErrorShape } from '../protocol/errors.ts';
import { tokensOf, type Usage } from '../protocol/missions.ts';

export class StopReason extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
  }
}

/** The reason `signal` was aborted with; null when it was not, or by the user. */
export function stopReason(signal: AbortSignal): ErrorShape | null {
  return signal.aborted && signal.reason instanceof StopReason ? signal.reason.shape : null;
}

/**
 * Counts what a mission spends, every model call of it and its subagents' as they come, and
 * stops it at `budget` tokens (0: no limit).
 */
export function tokenBudget(budget: number, controller: AbortController): (usage: Usage) => void {
  let spentTokens = 0;
  return (usage) => {
    spentTokens += tokensOf(usage);
    if (budget > 0 && spentTokens >= budget && !controller.signal.aborted) controller.abort(new StopReason(budgetError(spentTokens, budget)));
  };
}

/** The words of a budget stop: what was used, the limit, and where to change it. */
export function budgetError(spent: number, budget: number): ErrorShape {
  const n = (value: number) => value.toLocaleString('en-US');
  return {
    code: 'budget',
    message: `Stopped at this mission's token budget: it used ${n(spent)} tokens of the ${n(budget)} allowed (its subagents included). What it did is above; raise the token budget per mission in Settings, or ask for a smaller step.`,
  };
}
