// Kiosk mode on screen: Settings → Kiosk mode sets it up (the owner's PIN, the idle time, a daily
// reset, whether the terminal shows); then the top bar holds only the stack's name and an Owner
// button (the PIN ends kiosk mode), and after the idle time a visible countdown, which any touch
// cancels, reloads the page, which returns the stack to its reset point (App.tsx) before it opens,
// in a new version of the app if one is waiting.
import { useEffect, useRef, useState } from 'preact/hooks';
import { checkPin, COUNTDOWN_MS, DEFAULT_IDLE_MS, KioskClosedError, kioskConfig, nextDailyReset, pinProblem, startKiosk, type KioskConfig } from './kiosk.ts';
import { restartIntoUpdate, usePwa } from '../pwa/pwa.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { stacksClient } from '../stacks/stacks-client.ts';

/** Settings → Kiosk mode: the owner makes this stack a kiosk, as it is now. */
export function KioskSection({ stackId }: { stackId: string }) {
  const client = useStackClient();
  const [pin, setPin] = useState('');
  const [again, setAgain] = useState('');
  const [idle, setIdle] = useState(String(DEFAULT_IDLE_MS / 60_000));
  const [daily, setDaily] = useState('');
  const [terminal, setTerminal] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [closed, setClosed] = useState(false);

  const start = async () => {
    const minutes = Number(idle);
    const wrong = pinProblem(pin) ?? (pin !== again ? 'The two PINs differ.' : null) ?? (!Number.isFinite(minutes) || minutes < 1 || minutes > 240 ? 'The idle time is 1 to 240 minutes.' : null);
    if (wrong) return setProblem(wrong);
    setBusy(true);
    setProblem(null);
    try {
      const config = await kioskConfig(stackId, { pin, idle_ms: Math.round(minutes * 60_000), daily_reset: daily || null, allow_terminal: terminal });
      await startKiosk(client, stacksClient(), stackId, config);
      await document.documentElement.requestFullscreen?.().catch(() => {});
      location.reload();
    } catch (error) {
      setBusy(false);
      setClosed(error instanceof KioskClosedError);
      setProblem(error instanceof StackCallError || error instanceof Error ? error.message : String(error));
    }
  };

  return (
    <section class="rules kiosk-setup" aria-labelledby="kiosk-title">
      <h3 id="kiosk-title">Kiosk mode</h3>
      <p class="rules-hint">
        For a shop or library terminal. This stack, exactly as it is now, becomes what every visitor starts from: after each visitor (and at every
        start) their chat, uploads, windows, memory and files are deleted. Visitors see no Settings, stack menu or export, and the agent never asks
        them to allow more than you have. Leaving kiosk mode takes the PIN.
      </p>
      <div class="kiosk-fields">
        <label>
          Owner PIN (6 to 12 digits)
          <input type="password" inputMode="numeric" autocomplete="new-password" value={pin} onInput={(e) => setPin(e.currentTarget.value)} disabled={busy} />
        </label>
        <label>
          PIN again
          <input type="password" inputMode="numeric" autocomplete="new-password" value={again} onInput={(e) => setAgain(e.currentTarget.value)} disabled={busy} />
        </label>
        <label>
          Reset after idle (minutes)
          <input type="number" min={1} max={240} step={1} value={idle} onInput={(e) => setIdle(e.currentTarget.value)} disabled={busy} />
        </label>
        <label>
          Daily reset at (optional)
          <input type="time" value={daily} onInput={(e) => setDaily(e.currentTarget.value)} disabled={busy} />
        </label>
      </div>
      <label class="settings-check">
        <input type="checkbox" checked={terminal} onChange={(e) => setTerminal(e.currentTarget.checked)} disabled={busy} />
        Visitors may use the terminal
      </label>
      {problem && (
        <p class="settings-error" role="alert">
          {problem}
          {closed && ' Kiosk mode did not start.'}
        </p>
      )}
      {closed ? (
        <button type="button" class="button" onClick={() => location.reload()}>
          Open the stack again
        </button>
      ) : (
        <button type="button" class="button" onClick={() => void start()} disabled={busy}>
          {busy ? 'Saving the starting point…' : 'Start kiosk mode'}
        </button>
      )}
    </section>
  );
}

/**
 * The Owner button in a kiosk's top bar: the PIN ends kiosk mode (five wrong ones lock it for a
 * minute, the next five for two, doubling up to an hour); `leave` does it, then the page loads again.
 */
export function KioskOwner({ leave }: { leave(): Promise<void> }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [pin, setPin] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (open && !dialog.current?.open) dialog.current?.showModal();
    if (!open && dialog.current?.open) dialog.current.close();
  }, [open]);

  const submit = async () => {
    setBusy(true);
    const outcome = await checkPin(pin);
    setPin('');
    if (!outcome.ok) {
      setMessage(outcome.message);
      setBusy(false);
      return;
    }
    try {
      await leave();
      await document.exitFullscreen?.().catch(() => {});
      location.reload();
    } catch (error) {
      setMessage(error instanceof StackCallError || error instanceof Error ? error.message : String(error));
      setBusy(false);
    }
  };

  return (
    <>
      <button type="button" class="button" onClick={() => (setMessage(null), setOpen(true))}>
        Owner
      </button>
      <dialog ref={dialog} class="settings stack-dialog" aria-labelledby="kiosk-owner-title" onClose={() => setOpen(false)}>
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            void submit();
          }}
        >
          <h2 id="kiosk-owner-title">Leave kiosk mode</h2>
          <p>The stack stays as it is now and stops resetting itself.</p>
          <label>
            Owner PIN
            <input type="password" inputMode="numeric" autocomplete="off" value={pin} onInput={(e) => setPin(e.currentTarget.value)} disabled={busy} />
          </label>
          {message && (
            <p class="settings-error" role="alert">
              {message}
            </p>
          )}
          <div class="settings-actions">
            <button type="button" class="button" onClick={() => setOpen(false)} disabled={busy}>
              Cancel
            </button>
            <button type="submit" class="button button--primary" disabled={busy || !pin}>
              Leave kiosk mode
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/**
 * The kiosk starts over: the page loads again and the stack returns to its reset point before it
 * opens. A new version of the app, waiting, is what it loads: a kiosk never shows visitors the
 * update notice, and has nothing of theirs to save first.
 */
function startOver(): void {
  if (usePwa.getState().update.state === 'ready') void restartIntoUpdate();
  else location.reload();
}

/**
 * Watches for a visitor gone: after `idle_ms` without a touch, key or scroll, a countdown shows
 * for 20 s; any input cancels it; at its end (or at the daily reset time) the kiosk starts over.
 */
export function KioskIdle({ config, reset = startOver }: { config: KioskConfig; reset?: () => void }) {
  const [left, setLeft] = useState<number | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    let tick: ReturnType<typeof setInterval> | null = null;
    const stopCountdown = () => {
      if (tick) clearInterval(tick);
      tick = null;
      setLeft(null);
    };
    const countdown = () => {
      const ends = Date.now() + COUNTDOWN_MS;
      setLeft(COUNTDOWN_MS);
      tick = setInterval(() => {
        const remaining = ends - Date.now();
        if (remaining > 0) return setLeft(remaining);
        stopCountdown();
        reset();
      }, 250);
    };
    const arm = () => {
      if (timer.current) clearTimeout(timer.current);
      timer.current = setTimeout(countdown, config.idle_ms);
    };
    const input = () => {
      stopCountdown();
      arm();
    };
    const events = ['pointerdown', 'keydown', 'wheel', 'touchstart'] as const;
    for (const name of events) document.addEventListener(name, input, { capture: true, passive: true });
    arm();
    const daily = nextDailyReset(config.daily_reset, Date.now());
    const dailyTimer = daily === null ? null : setTimeout(reset, daily - Date.now());
    return () => {
      for (const name of events) document.removeEventListener(name, input, { capture: true });
      if (timer.current) clearTimeout(timer.current);
      if (dailyTimer) clearTimeout(dailyTimer);
      stopCountdown();
    };
  }, [config]);

  if (left === null) return null;
  return (
    <div class="kiosk-countdown" role="alertdialog" aria-modal="true" aria-labelledby="kiosk-countdown-text">
      <p id="kiosk-countdown-text">
        Starting over for the next visitor in <strong>{Math.ceil(left / 1000)} s</strong>: this conversation, the files and everything added are deleted.
      </p>
      <p>Touch anywhere to keep going.</p>
    </div>
  );
}
