// Suspending the stack's computer and waiting until it says it did: before the page restarts into
// a new version of the app, so the machine's memory and its files are there after.
import type { ComputerStatus } from '../../protocol/computer.ts';
import type { StackClient } from '../connection/stack-client.ts';
import { useAppStore } from '../connection/store.ts';

/** States in which the computer runs (or is about to) and has memory to save. */
const RUNNING: ReadonlySet<ComputerStatus['state']> = new Set(['ready', 'booting', 'waking']);

/** How long a save before the restart may take; a suspend on a busy machine is a few seconds. */
export const SUSPEND_TIMEOUT_MS = 120_000;

/**
 * Suspends the stack's computer if it runs, resolving once it reported "suspended"; throws, with
 * what went wrong, otherwise. A computer that is off, suspended or never started has nothing to save.
 */
export async function suspendComputer(client: Pick<StackClient, 'call'>, timeoutMs = SUSPEND_TIMEOUT_MS): Promise<void> {
  const state = () => useAppStore.getState().view.computer?.state;
  const before = state();
  if (!before || !RUNNING.has(before)) return;
  // Settled by whichever says so first: the call's answer, or the status event it sends.
  await new Promise<void>((resolve, reject) => {
    let unsubscribe = () => {};
    const settle = (computer: ComputerStatus | null | undefined): boolean => {
      if (computer?.state !== 'suspended' && computer?.state !== 'error') return false;
      clearTimeout(timer);
      unsubscribe();
      if (computer.state === 'suspended') resolve();
      else reject(new Error(`the computer could not save itself (${computer.message})`));
      return true;
    };
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`the computer did not save itself within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    unsubscribe = useAppStore.subscribe((store) => void settle(store.view.computer));
    client.call('computer', { action: 'suspend' }).then(
      (answer) => void settle(answer),
      (error: unknown) => {
        clearTimeout(timer);
        unsubscribe();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
