// One tab owns a stack at a time (a Web Lock named after it). Another tab learns so and can take
// the stack over; the tab that loses it stops its worker and says why.
import { useEffect, useState } from 'preact/hooks';
import { stackLockName } from '../../protocol/stacks-api.ts';

export type LockState = 'acquiring' | 'held' | 'elsewhere' | 'lost';

export interface StackLock {
  state(): LockState;
  /** Calls `listener` at each change of state; returns the way to stop. */
  subscribe(listener: (state: LockState) => void): () => void;
  /** Takes the stack from the tab that has it (that tab's lock is lost). */
  takeOver(): void;
}

/**
 * Asks for the stack's lock now, without waiting for a render: a page can start the stack's
 * worker the moment the lock is held (`onHeld`, at each hold), while its first screen renders.
 */
export function lockStack(stackId: string, onHeld: () => void = () => {}): StackLock {
  let state: LockState = 'acquiring';
  const listeners = new Set<(state: LockState) => void>();
  const set = (next: LockState) => {
    state = next;
    if (next === 'held') onHeld();
    for (const listener of listeners) listener(next);
  };
  const request = (steal: boolean) => {
    if (!('locks' in navigator)) return set('held'); // no Web Locks: nothing to coordinate with
    navigator.locks
      .request(stackLockName(stackId), steal ? { steal: true } : { ifAvailable: true }, async (lock) => {
        if (!lock) return set('elsewhere');
        set('held');
        // Held for the life of the page, unless another tab takes it over.
        await new Promise<never>(() => {});
      })
      .catch(() => set('lost'));
  };
  request(false);
  return {
    state: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    takeOver: () => request(true),
  };
}

export function useStackLock(lock: StackLock): LockState {
  const [state, setState] = useState(lock.state);
  // A change between the first render and this effect is not missed.
  useEffect(() => (setState(lock.state()), lock.subscribe(setState)), [lock]);
  return state;
}
