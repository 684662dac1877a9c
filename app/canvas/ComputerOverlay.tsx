// Over the terminal while the computer is not ready: what it is doing (downloading with progress,
// booting, waking), or why it is not running and the button that starts it again.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { ComputerStatus } from '../../protocol/computer.ts';
import { assertNever } from '../../protocol/errors.ts';
import { percent } from '../computer/computer-status.ts';
import { Spinner } from '../common/Spinner.tsx';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';

type Action = 'start' | 'reboot';

export function ComputerOverlay({ status }: { status: ComputerStatus | null }) {
  const client = useStackClient();
  const [sending, setSending] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const act = (action: Action) => {
    setSending(true);
    setProblem(null);
    client
      .call('computer', { action })
      .catch((error: unknown) => setProblem(error instanceof StackCallError ? error.message : 'The computer did not answer.'))
      .finally(() => setSending(false));
  };
  const button = (action: Action, label: string) => (
    <button type="button" class="button button--primary" disabled={sending} onClick={() => act(action)}>
      {label}
    </button>
  );

  return (
    <div class="terminal-overlay" data-state={status?.state ?? 'unknown'}>
      <OverlayBody status={status} button={button} />
      {problem && (
        <p class="window-problem" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

function OverlayBody({ status, button }: { status: ComputerStatus | null; button: (action: Action, label: string) => JSX.Element }) {
  if (status === null) return <p>Connecting to the computer…</p>;
  switch (status.state) {
    case 'downloading':
      return (
        <>
          <p>Setting up the computer: downloading it into this browser (once).</p>
          <progress max={1} value={Math.min(1, Math.max(0, status.progress))} aria-label="Download progress">
            {percent(status.progress)}%
          </progress>
          <p class="terminal-overlay-detail">
            {percent(status.progress)}%{status.detail ? ` · ${status.detail}` : ''}
          </p>
        </>
      );
    case 'booting':
      return (
        <>
          <p>
            <Spinner /> Starting the computer…
          </p>
          {status.detail && <p class="terminal-overlay-detail">{status.detail}</p>}
        </>
      );
    case 'waking':
      return (
        <p>
          <Spinner /> Waking the computer…
        </p>
      );
    case 'suspended':
      return (
        <>
          <p>The computer is suspended; it wakes in about a second.</p>
          {button('start', 'Wake it')}
        </>
      );
    case 'off':
      return (
        <>
          <p>The computer is off.</p>
          {button('start', 'Start the computer')}
        </>
      );
    case 'error':
      return (
        <>
          <p class="terminal-overlay-error">The computer stopped: {status.message}</p>
          {/* A cold boot keeps the disk; when a reboot cannot help, starting again is what is left. */}
          {button(status.can_reboot ? 'reboot' : 'start', 'Restart the computer')}
        </>
      );
    case 'unavailable':
      return <p>{status.message}</p>;
    case 'ready':
      return null;
    default:
      return assertNever(status, 'computer status');
  }
}
