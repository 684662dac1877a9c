// A tab hidden or frozen may be discarded next (ChromeOS under memory pressure, a phone). At once:
// the computer saves what changed since its last save rather than after its quiet time, and the
// OCR workers not reading a page give their memory back. Hidden for REST_AFTER_HIDDEN_MS (or
// frozen), a computer with nothing running in it is suspended as well, giving back the hundreds
// of MB its guest and compiled code hold; shown again, the page wakes it (well under a second).
import type { StackClient } from '../connection/stack-client.ts';
import type { ComputerStatus } from '../../protocol/computer.ts';

export const REST_AFTER_HIDDEN_MS = 30_000;

type Events = Pick<EventTarget, 'addEventListener' | 'removeEventListener'>;

export interface HiddenTabOptions {
  document: Events & { readonly visibilityState: DocumentVisibilityState };
  window: Events;
  client: Pick<StackClient, 'call'>;
  /** The computer's state as the page last heard it. */
  computerState(): ComputerStatus['state'] | undefined;
  restAfterMs?: number;
}

/** Starts watching; returns the function that stops it. */
export function watchHiddenTab({ document, window, client, computerState, restAfterMs = REST_AFTER_HIDDEN_MS }: HiddenTabOptions): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The page suspended the computer: it wakes it when shown again. */
  let rested = false;
  const rest = () => {
    clearTimeout(timer);
    timer = undefined;
    if (computerState() !== 'ready') return;
    client.call('computer', { action: 'rest' }).then(
      (status) => (rested ||= status.state === 'suspended'),
      () => {},
    );
  };
  const onHidden = (event: Event) => {
    if (event.type !== 'freeze' && document.visibilityState !== 'hidden') return;
    client.call('computer', { action: 'save' }).catch(() => {});
    client.call('release_memory', {}).catch(() => {});
    if (event.type === 'freeze') rest();
    else if (timer === undefined) timer = setTimeout(rest, restAfterMs);
  };
  const onShown = () => {
    if (document.visibilityState !== 'visible') return;
    clearTimeout(timer);
    timer = undefined;
    if (!rested) return;
    rested = false;
    // Unless something woke it meanwhile (a scheduled task's command), or the user stopped it.
    if (computerState() === 'suspended') client.call('computer', { action: 'start' }).catch(() => {});
  };
  const onVisibility = (event: Event) => (document.visibilityState === 'hidden' ? onHidden(event) : onShown());
  document.addEventListener('visibilitychange', onVisibility);
  document.addEventListener('freeze', onHidden);
  document.addEventListener('resume', onShown);
  window.addEventListener('pagehide', onHidden);
  return () => {
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisibility);
    document.removeEventListener('freeze', onHidden);
    document.removeEventListener('resume', onShown);
    window.removeEventListener('pagehide', onHidden);
  };
}
