// The app as an installed app: the browser's offer to install it, and its service worker (offline
// use; a new version takes over on the next load).
import { registerSW } from 'virtual:pwa-register';
import { create } from 'zustand';

/** Chromium's install offer (not in TypeScript's DOM types). */
interface InstallPrompt extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: 'accepted' | 'dismissed' }>;
}

interface PwaState {
  /** The browser offers to install the app (held until the user asks); null once installed or not offered. */
  install: InstallPrompt | null;
}

export const usePwa = create<PwaState>()(() => ({ install: null }));

/** Listens for the install offer; call before the page settles (the browser offers it early). */
export function listenForInstall(): void {
  window.addEventListener('beforeinstallprompt', (event) => {
    event.preventDefault();
    usePwa.setState({ install: event as InstallPrompt });
  });
  window.addEventListener('appinstalled', () => usePwa.setState({ install: null }));
}

/** Registers the service worker (offline use); a new version takes over on the next load. */
export function registerServiceWorker(): void {
  registerSW({ immediate: true });
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
