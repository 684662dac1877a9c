// A new version of the app is installed and waits: told across the top, with "Restart" when it
// suits the user. The restart first has the computer save itself (suspend), so a command's files
// and the machine's memory are there after it; while the assistant works, it waits.
import { restartIntoUpdate, usePwa } from './pwa.ts';
import { useAppStore } from '../connection/store.ts';

export function UpdateNotice() {
  const update = usePwa((state) => state.update);
  const working = useAppStore((state) => state.view.activeMissions.length > 0);
  if (update.state === 'none') return null;
  const restarting = update.state === 'restarting';
  return (
    <div class="update-notice" role="status" aria-label="New version">
      <strong>A new version of Stackdocs is ready.</strong>
      <span>
        {restarting
          ? 'Saving the computer, then restarting…'
          : update.problem
            ? `Not restarted: ${update.problem}`
            : working
              ? 'Restart once the assistant has finished; the computer saves itself first.'
              : 'Restarting saves the computer first: nothing is lost.'}
      </span>
      {!restarting && (
        <button type="button" class="button" disabled={working} onClick={() => void restartIntoUpdate()}>
          Restart
        </button>
      )}
    </div>
  );
}
