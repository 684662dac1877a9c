// Storage: whether the browser keeps the stacks (and asking it to), what each stack holds, and
// how much room this site uses and has left. Read each time Settings opens.
import { useEffect, useState } from 'preact/hooks';
import type { StacksReport } from '../../protocol/stacks-api.ts';
import { formatBytes } from '../../protocol/wording.ts';
import { askToKeep, persistence, persistenceWords, type Persistence } from '../stacks/persistence.ts';
import { stacksClient } from '../stacks/stacks-client.ts';
import { listStacks } from '../stacks/stacks.ts';
import { useAppStore } from '../connection/store.ts';

export function StorageSection() {
  const open = useAppStore((state) => state.settingsOpen);
  const [kept, setKept] = useState<Persistence | null>(null);
  const [report, setReport] = useState<StacksReport | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    let stopped = false;
    void persistence().then((state) => !stopped && setKept(state));
    stacksClient()
      .list(listStacks())
      .then(
        (next) => !stopped && (setReport(next), setError(null)),
        (failure: unknown) => !stopped && setError(failure instanceof Error ? failure.message : String(failure)),
      );
    return () => {
      stopped = true;
    };
  }, [open]);

  const total = report?.stacks.reduce((sum, stack) => sum + stack.bytes, 0) ?? 0;
  return (
    <section class="rules" aria-labelledby="storage-title">
      <h3 id="storage-title">Storage</h3>
      {kept && (
        <p class={`storage-note${kept === 'kept' ? '' : ' storage-note--warn'}`} data-testid="storage-persistence">
          {persistenceWords(kept)}
        </p>
      )}
      {kept === 'best_effort' && (
        <button type="button" class="button settings-forget" onClick={() => void askToKeep().then(setKept)}>
          Ask the browser to keep them
        </button>
      )}
      {report && (
        <>
          <ul class="storage-list" aria-label="Room used by each stack">
            {report.stacks.map((stack) => (
              <li key={stack.id}>
                <span>{stack.name}</span>
                <span>{formatBytes(stack.bytes)}</span>
              </li>
            ))}
          </ul>
          <p class="storage-note" data-testid="storage-total">
            {report.usage !== null && report.quota !== null
              ? `All stacks: ${formatBytes(total)}. This site uses ${formatBytes(report.usage)} of the ${formatBytes(report.quota)} the browser allows it: ${formatBytes(Math.max(0, report.quota - report.usage))} free, shared by every stack.`
              : `All stacks: ${formatBytes(total)}. The browser does not say how much room is left.`}
          </p>
        </>
      )}
      {error && (
        <p class="settings-error" role="alert">
          The stacks could not be measured: {error}
        </p>
      )}
    </section>
  );
}
