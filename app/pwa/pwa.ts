// The app as an installed app: the browser's offer to install it, and its service worker (offline
// use, and updates). A new version is installed in the background and waits: the user is told,
// and restarts into it when it suits them, after the computer has saved itself. Nothing reloads
// the page under a running computer.
import { registerSW } from 'virtual:pwa-register';
import { create } from 'zustand';

/** Chromium's install offer (not in TypeScript's DOM types). */
interface InstallPrompt extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: 'accepted' | 'dismissed' }>;
}

/** Where a new version stands: none waiting, one waiting, or the restart into it under way. */
export type UpdateState = { state: 'none' } | { state: 'ready'; problem?: string } | { state: 'restarting' };

interface PwaState {
  /** The browser offers to install the app (held until the user asks); null once installed or not offered. */
  install: InstallPrompt | null;
  update: UpdateState;
}

export const usePwa = create<PwaState>()(() => ({ install: null, update: { state: 'none' } }));

/** How often an open app asks whether a new version was published (and when it comes back online). */
const UPDATE_CHECK_MS = 60 * 60 * 1000;

/** How long "Restart" waits for the new version to take over before reloading regardless. */
const RELOAD_ANYWAY_MS = 20_000;

let activate: (() => Promise<void>) | null = null;
let prepare: () => Promise<void> = async () => {};
let prepared: Promise<void> | null = null;

/** Listens for the install offer; call before the page settles (the browser offers it early). */
export function listenForInstall(): void {
  window.addEventListener('beforeinstallprompt', (event) => {
    event.preventDefault();
    usePwa.setState({ install: event as InstallPrompt });
  });
  window.addEventListener('appinstalled', () => usePwa.setState({ install: null }));
}

/** Registers the service worker: offline use, and new versions that wait for the user. */
export function registerServiceWorker(): void {
  // The first version a visit installs takes control of the page (clients.claim): nothing to
  // restart. A later change of controller is a new version taking over (after "Restart" here, or
  // in another tab of the app): this page's code is the old version's, so it reloads, once its
  // computer has saved itself. (vite-plugin-pwa reloads on its own only pages that had a
  // controller when they registered, and without saving anything first.)
  // No service worker (an http:// page that is not localhost, or a browser without them): no
  // offline use and no updates to wait for, and nothing here may stop the app from starting.
  if (!('serviceWorker' in navigator)) return;
  let controlled = navigator.serviceWorker.controller !== null;
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    // (A page the user restarts from reloads whatever it was controlled by before.)
    if (!controlled && usePwa.getState().update.state !== 'restarting') {
      controlled = true;
      return;
    }
    usePwa.setState({ update: { state: 'restarting' } });
    void (prepared ??= prepare())
      .catch((error: unknown) => console.warn('restarting into the new version without saving the computer:', error))
      .then(() => location.reload());
  });
  const update = registerSW({
    immediate: true,
    onNeedRefresh: () => usePwa.setState({ update: { state: 'ready' } }),
    // Handled above, for every page and after the computer saved itself.
    onNeedReload: () => {},
    onRegisteredSW(_url, registration) {
      if (!registration) return;
      const check = () => {
        if (navigator.onLine && registration.installing === null) registration.update().catch(() => {});
      };
      setInterval(check, UPDATE_CHECK_MS);
      window.addEventListener('online', check);
    },
  });
  activate = () => update(true);
}

/** What must happen before the page restarts into a new version (the computer saving itself). */
export function beforeUpdateRestart(work: () => Promise<void>): void {
  prepare = work;
}

/**
 * Restarts into the waiting version: first `beforeUpdateRestart`'s work, then the new service
 * worker takes over, and the page reloads when it does (above). If that work fails, nothing
 * restarts and the notice says why.
 */
export async function restartIntoUpdate(): Promise<void> {
  if (!activate || usePwa.getState().update.state !== 'ready') return;
  usePwa.setState({ update: { state: 'restarting' } });
  prepared = prepare();
  try {
    await prepared;
  } catch (error) {
    prepared = null;
    usePwa.setState({ update: { state: 'ready', problem: error instanceof Error ? error.message : String(error) } });
    return;
  }
  await activate();
  // The old version's worker hands over once it is idle (seconds); Chromium waits for that up to
  // 5 minutes while something keeps it busy. The computer is saved by now, so the page does not
  // wait that long: it reloads, and the new version takes over at the next chance.
  setTimeout(() => location.reload(), RELOAD_ANYWAY_MS);
}

/** Shows the browser's install dialog; the offer is used up either way. */
export async function install(): Promise<'accepted' | 'dismissed'> {
  const offer = usePwa.getState().install;
  if (!offer) return 'dismissed';
  await offer.prompt();
  const { outcome } = await offer.userChoice;
  usePwa.setState({ install: null });
  return outcome;
}
