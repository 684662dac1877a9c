// xterm.js and its fit addon, loaded (with xterm's stylesheet) the first time a terminal window
// opens, so they are not in the main chunk.
import type { FitAddon } from '@xterm/addon-fit';
import type { Terminal } from '@xterm/xterm';

export interface TerminalLib {
  Terminal: typeof Terminal;
  FitAddon: typeof FitAddon;
}

let loading: Promise<TerminalLib> | undefined;

export function loadTerminal(): Promise<TerminalLib> {
  loading ??= Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit'), import('@xterm/xterm/css/xterm.css')]).then(
    ([xterm, fit]) => ({ Terminal: xterm.Terminal, FitAddon: fit.FitAddon }),
    (error: unknown) => {
      // A failed chunk load (offline, a new deploy) is tried again next time.
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
