// The computer's state in the header: "Computer: downloading 42%", "ready (woke in 0.6 s)"...
// Ready, it opens the terminal; after an error, it restarts the computer.
import { useState } from 'preact/hooks';
import { useOpenTerminal } from './canvas/useOpenTerminal.ts';
import { computerChipText } from './computer-status.ts';
import { useStackClient } from './stack-context.ts';
import { useAppStore } from './store.ts';

export function ComputerChip() {
  const client = useStackClient();
  const status = useAppStore((state) => state.view.computer);
  const openTerminal = useOpenTerminal();
  const [busy, setBusy] = useState(false);
  if (status === null) return null;
  const text = computerChipText(status);

  const run = (work: () => Promise<unknown>) => {
    setBusy(true);
    // What comes of it arrives as a computer_status event, which the chip shows.
    work()
      .catch(() => {})
      .finally(() => setBusy(false));
  };

  return (
    // aria-busy while downloading: the percentage is not read out at every step, the next state is.
    <span
      class={`status-pill computer-chip computer-chip--${status.state}`}
      role="status"
      aria-live="polite"
      aria-atomic="true"
      aria-busy={status.state === 'downloading'}
      aria-label="Computer"
    >
      {status.state === 'ready' ? (
        <button type="button" class="computer-chip-button" onClick={() => run(openTerminal)} title="Open the terminal">
          Computer: {text}
        </button>
      ) : (
        <span title={status.state === 'error' || status.state === 'unavailable' ? status.message : undefined}>Computer: {text}</span>
      )}
      {status.state === 'error' && (
        <>
          {' — '}
          <button
            type="button"
            class="computer-chip-button"
            disabled={busy}
            onClick={() => run(() => client.call('computer', { action: status.can_reboot ? 'reboot' : 'start' }))}
            aria-label="Restart the computer"
          >
            Restart
          </button>
        </>
      )}
    </span>
  );
}
