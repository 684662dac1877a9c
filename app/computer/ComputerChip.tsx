// The computer's state in the header: "Computer: downloading 42%", "ready (woke in 0.6 s)"...
// Ready, it opens the terminal (not on a kiosk whose owner hid it); after an error, it restarts
// the computer.
import { useEffect, useState } from 'preact/hooks';
import { useOpenTerminal } from '../canvas/useOpenTerminal.ts';
import { computerChipText, offlineText } from './computer-status.ts';
import { TERMINAL_HIDDEN } from '../kiosk/kiosk.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';

export function ComputerChip() {
  const client = useStackClient();
  const status = useAppStore((state) => state.view.computer);
  const openTerminal = useOpenTerminal();
  const [busy, setBusy] = useState(false);
  useDownloadWhenInstalled(status !== null && status.state !== 'unavailable');
  if (status === null) return null;
  const text = computerChipText(status);
  const offline = offlineText(status);

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
      {status.state === 'ready' && !TERMINAL_HIDDEN ? (
        <button type="button" class="computer-chip-button" onClick={() => run(openTerminal)} title="Open the terminal">
          Computer: {text}
        </button>
      ) : (
        <span title={status.state === 'error' || status.state === 'unavailable' ? status.message : undefined}>Computer: {text}</span>
      )}
      {offline && (
        <span class="computer-chip-offline" title="The rest of the computer's system downloads in the background; until then, some programs need the network the first time they run.">
          {' · '}
          {offline}
        </span>
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

/**
 * Installed as an app (or opened as one), the computer's whole system image is fetched into
 * this browser in the background, so the computer works offline before it was ever started.
 */
function useDownloadWhenInstalled(hasComputer: boolean) {
  const client = useStackClient();
  useEffect(() => {
    if (!hasComputer) return;
    const download = () => void client.call('computer', { action: 'download' }).catch(() => {});
    if (matchMedia('(display-mode: standalone)').matches || matchMedia('(display-mode: window-controls-overlay)').matches) download();
    window.addEventListener('appinstalled', download);
    return () => window.removeEventListener('appinstalled', download);
  }, [client, hasComputer]);
}
