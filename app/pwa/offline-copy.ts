// When a first visit fetches the app's offline copy (its service worker's precache, ~35 MB, 238
// files): not with the page itself, and not while the user waits on heavier work in this tab — the
// computer's first download, a document being read — or is typing, since the copy's downloads and
// cache writes share the device's cores. On two cores, a 20-page scan attached at once on a first
// visit was read in 36.6 s with 13 of 280 keys typed meanwhile answered in over 100 ms while the
// copy was made beside it; 29.6-32.3 s and 0-4 of 208-238 (the odd one as the reading started
// or ended) with the copy made after it (2026-11-27). Once every such wait is over, or at the
// latest `capMs` after the page, it starts.
import type { StackView } from '../connection/events.ts';

/** Why the offline copy waits in this view, or null when it may start. */
export function offlineCopyWaitsFor(view: StackView): 'computer download' | 'document reading' | null {
  if (view.computer?.state === 'downloading') return 'computer download';
  if (Object.values(view.documents).some((doc) => doc.status === 'uploaded' || doc.status === 'processing')) return 'document reading';
  return null;
}

export interface OfflineCopySchedule {
  /** The view now, and a way to hear of each change (returns its unsubscribe). */
  view(): StackView;
  subscribe(listener: () => void): () => void;
  /** When the user last pressed a key or touched the page (ms, `now`'s clock); 0 for never. */
  lastInputAt(): number;
  /** Registers the service worker; called once. */
  start(): void;
  now?: () => number;
  /** How long after the page the copy waits in any case (the page's own loading). */
  settleMs?: number;
  /** How long after the user's last input. */
  quietMs?: number;
  /** The latest it starts, whatever is under way. */
  capMs?: number;
}

/** Starts the offline copy once the page has settled, nothing heavy is under way and the user paused; or at the cap. */
export function startOfflineCopyWhenQuiet({ view, subscribe, lastInputAt, start, now = () => performance.now(), settleMs = 3_000, quietMs = 2_000, capMs = 120_000 }: OfflineCopySchedule): void {
  let done = false;
  let settled = false;
  let pause: ReturnType<typeof setTimeout> | undefined;
  const finish = () => {
    if (done) return;
    done = true;
    unsubscribe();
    clearTimeout(settle);
    clearTimeout(pause);
    clearTimeout(cap);
    start();
  };
  const check = () => {
    if (done || !settled || offlineCopyWaitsFor(view()) !== null) return;
    const typing = lastInputAt() + quietMs - now();
    if (typing <= 0) return finish();
    // Asked again once the user may have paused (a later key moves that on).
    clearTimeout(pause);
    pause = setTimeout(check, typing);
  };
  const unsubscribe = subscribe(check);
  const settle = setTimeout(() => {
    settled = true;
    check();
  }, settleMs);
  const cap = setTimeout(finish, capMs);
}

/** When the user last pressed a key or touched this page (performance.now()), until `stop`. */
export function watchInput(target: Pick<Window, 'addEventListener' | 'removeEventListener'> = window): { lastInputAt: () => number; stop: () => void } {
  let last = 0;
  const seen = () => {
    last = performance.now();
  };
  const types = ['keydown', 'pointerdown', 'wheel'] as const;
  for (const type of types) target.addEventListener(type, seen, { capture: true, passive: true });
  return {
    lastInputAt: () => last,
    stop: () => {
      for (const type of types) target.removeEventListener(type, seen, { capture: true });
    },
  };
}
