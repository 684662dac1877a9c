// Keeps the workers' policy in step with the model endpoint the stack uses: the service worker is
// told each endpoint as it is chosen (or as a stack opens with it), and a stack whose workers
// started under a policy without it waits for the turn under way, saves its computer and opens
// again, now able to reach it.
import { useEffect } from 'preact/hooks';
import { allowEndpoint, hostSendsPolicy, mustRestartFor, WORKERS_FROM_SERVICE_WORKER } from './endpoint-policy.ts';
import type { StackClient } from '../connection/stack-client.ts';
import { useAppStore } from '../connection/store.ts';
import { suspendComputer } from '../computer/suspend-computer.ts';

export function useEndpointPolicy(client: Pick<StackClient, 'call'>): void {
  const endpoint = useAppStore((state) => state.view.settings?.endpoint ?? null);
  useEffect(() => {
    if (!endpoint || !('serviceWorker' in navigator)) return;
    let current = true;
    void allowEndpoint(endpoint).then(async (answer) => {
      if (answer && !answer.ok) console.warn(answer.message);
      if (!answer?.ok || answer.result !== 'added') return;
      const underPolicy = WORKERS_FROM_SERVICE_WORKER || (await hostSendsPolicy());
      if (!current || !mustRestartFor(endpoint, answer, underPolicy, sessionStorage)) return;
      // A turn under way is not cut short by the reload: it ends first, however it ends.
      await untilNoMission();
      console.info(`opening the stack again, so that its workers may reach ${new URL(endpoint).origin}`);
      await suspendComputer(client).catch((error: unknown) => console.warn('opening the stack again without saving the computer:', error));
      location.reload();
    });
    return () => {
      current = false;
    };
  }, [endpoint, client]);
}

function untilNoMission(): Promise<void> {
  const idle = () => useAppStore.getState().view.activeMissions.length === 0;
  if (idle()) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = useAppStore.subscribe(() => {
      if (!idle()) return;
      stop();
      resolve();
    });
  });
}
