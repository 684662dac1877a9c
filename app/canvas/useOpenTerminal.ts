// Shows the terminal window: the open one if there is one (the serial console is a single shell),
// else a new one the agent hears of.
import { useCallback } from 'preact/hooks';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';

/** The returned function rejects (with a StackCallError) when the window could not be opened. */
export function useOpenTerminal(): () => Promise<void> {
  const client = useStackClient();
  return useCallback(async () => {
    const { view, focusWindow } = useAppStore.getState();
    const open = view.windows.find((win) => win.kind === 'terminal');
    if (open) {
      focusWindow(open.id);
      return;
    }
    const opened = await client.call('open_window', { kind: 'terminal', title: 'Terminal' });
    useAppStore.getState().focusWindow(opened.id);
  }, [client]);
}
