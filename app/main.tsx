// Entry of the app: renders the main screen and registers the service worker (offline use).
import { render } from 'preact';
import { registerSW } from 'virtual:pwa-register';
import { App } from './App.tsx';
import './styles.css';

render(<App />, document.getElementById('root')!);

// The new version takes over on the next load; nothing in flight is cut off.
registerSW({ immediate: true });
