// Entry of the app: renders the main screen and registers the service worker (offline use).
import { render } from 'preact';
import { App } from './App.tsx';
import { listenForInstall, registerServiceWorker } from './pwa.ts';
import { useAppStore } from './store.ts';
import './styles.css';

listenForInstall();
// A touch screen (a kiosk panel, a Chromebook in tablet mode): handles and inputs sized for fingers.
if (navigator.maxTouchPoints > 0) document.documentElement.classList.add('touch');
render(<App />, document.getElementById('root')!);

// The new version takes over on the next load; nothing in flight is cut off.
const register = registerServiceWorker;

if (navigator.serviceWorker?.controller) {
  register();
} else {
  // A first visit: the app's offline copy (about 40 MB) is fetched once what the user is waiting
  // for is here — a few seconds after the page, and not while the computer's first download
  // runs — so on a slow connection a first terminal does not share the line with it.
  let done = false;
  let pageSettled = false;
  const tryRegister = () => {
    if (done || !pageSettled || useAppStore.getState().view.computer?.state === 'downloading') return;
    done = true;
    unsubscribe();
    register();
  };
  const unsubscribe = useAppStore.subscribe(tryRegister);
  setTimeout(() => {
    pageSettled = true;
    tryRegister();
  }, 3000);
  // Whatever happens, within a minute.
  setTimeout(() => {
    pageSettled = true;
    if (!done) {
      done = true;
      unsubscribe();
      register();
    }
  }, 60_000);
}
