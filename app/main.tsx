// Entry of the app: renders the main screen and registers the service worker (offline use).
import { render } from 'preact';
import { App } from './App.tsx';
import { startOfflineCopyWhenQuiet, watchInput } from './pwa/offline-copy.ts';
import { listenForInstall, registerServiceWorker } from './pwa/pwa.ts';
import { useAppStore } from './connection/store.ts';
import './styles.css';

listenForInstall();
// A touch screen (a kiosk panel, a Chromebook in tablet mode): handles and inputs sized for fingers.
if (navigator.maxTouchPoints > 0) document.documentElement.classList.add('touch');
render(<App />, document.getElementById('root')!);

// The new version takes over on the next load; nothing in flight is cut off. A first visit makes
// its offline copy (about 35 MB) once what the user waits for is done and they pause (app/pwa/offline-copy.ts).
if (navigator.serviceWorker?.controller) {
  registerServiceWorker();
} else {
  const input = watchInput();
  startOfflineCopyWhenQuiet({
    view: () => useAppStore.getState().view,
    subscribe: (listener) => useAppStore.subscribe(listener),
    lastInputAt: input.lastInputAt,
    start: () => {
      input.stop();
      registerServiceWorker();
    },
  });
}
