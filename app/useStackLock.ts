// One tab owns a stack at a time (a Web Lock named after it). Another tab learns so and can take
// the stack over; the tab that loses it stops its worker and says why.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { stackLockName } from '../worker/protocol.ts';

export type LockState = 'acquiring' | 'held' | 'elsewhere' | 'lost';

export function useStackLock(stackId: string): { state: LockState; takeOver(): void } {
  const [state, setState] = useState<LockState>('acquiring');
  const request = useCallback(
    (steal: boolean) => {
      if (!('locks' in navigator)) {
        setState('held'); // no Web Locks: nothing to coordinate with
        return;
      }
      navigator.locks
        .request(stackLockName(stackId), steal ? { steal: true } : { ifAvailable: true }, async (lock) => {
          if (!lock) {
            setState('elsewhere');
            return;
          }
          setState('held');
          // Held for the life of the page, unless another tab takes it over.
          await new Promise<never>(() => {});
        })
        .catch(() => setState('lost'));
    },
    [stackId],
  );
  useEffect(() => request(false), [request]);
  return { state, takeOver: () => request(true) };
}
