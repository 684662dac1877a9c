// While the agent works: what it has spent so far on the running mission, and how many messages
// wait their turn (the stack runs one mission at a time).
import { addSpend, type Spend } from '../connection/events.ts';
import { useAppStore } from '../connection/store.ts';
import { formatSpend } from './format.ts';
import { Spinner } from '../common/Spinner.tsx';

export function MissionStatus() {
  const active = useAppStore((state) => state.view.activeMissions.length);
  const live = useAppStore((state) => state.view.live);
  if (active === 0) return null;
  const spent = Object.values(live).reduce<Spend>(addSpend, { tokens: 0, cost_usd: 0 });
  const waiting = active - 1;
  return (
    <p class="mission-status" data-role="mission-status">
      <Spinner /> Working
      {spent.tokens > 0 && <span> · {formatSpend(spent)} so far</span>}
      {waiting > 0 && <span> · {waiting} queued</span>}
    </p>
  );
}
