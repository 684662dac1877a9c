// "A new version is ready — Restart": shown while a new version waits. Restarting first closes the
// stack (the computer saved and stopped, documents finished, the databases closed), then lets the
// new version take over and reloads. Refused while the agent works, saying so.
import { useState } from 'preact/hooks';
import { install, usePwa } from './pwa.ts';
import { StackCallError } from './stack-client.ts';
import { useStackClient } from './stack-context.ts';

/** If the new version does not take over by then, the page reloads anyway (the stack is closed). */
const RELOAD_ANYWAY_MS = 15_000;

export function UpdateNotice() {
  const client = useStackClient();
  const ready = usePwa((state) => state.updateReady);
  const activate = usePwa((state) => state.activate);
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: false, error: null });
  if (!ready || !activate) return null;
  const restart = async () => {
    setState({ busy: true, error: null });
    try {
      await client.call('close', {});
    } catch (failure) {
      const busy = failure instanceof StackCallError && failure.shape.code === 'busy';
      setState({ busy: false, error: busy ? 'The agent is working: restart when it has finished, or stop it first.' : `The stack could not be closed for the restart: ${failure instanceof Error ? failure.message : String(failure)}` });
      return;
    }
    console.info('update: the computer is saved and the stack closed; restarting into the new version');
    setTimeout(() => location.reload(), RELOAD_ANYWAY_MS);
    await activate(true);
  };
  return (
    <div class="update-notice" role="status" aria-label="Update">
      <span>A new version of Stackdocs is ready.</span>
      <button type="button" class="button button--primary" disabled={state.busy} onClick={() => void restart()}>
        {state.busy ? 'Restarting…' : 'Restart'}
      </button>
      {state.error && <span class="update-error">{state.error}</span>}
    </div>
  );
}

/** "Install app" where the browser offers it; gone once installed. */
export function InstallButton() {
  const offer = usePwa((state) => state.install);
  if (!offer) return null;
  return (
    <button type="button" class="button" onClick={() => void install()}>
      Install app
    </button>
  );
}
