// Keyboard: Ctrl/Cmd-K focuses the chat, Esc stops the running mission, Alt-] and Alt-[ bring
// the next or previous window to the front.
import { useEffect } from 'preact/hooks';
import type { StackClient } from './stack-client.ts';
import { useAppStore } from './store.ts';

export const SHORTCUTS: [string, string][] = [
  ['Ctrl/⌘ K', 'Focus the chat'],
  ['Esc', 'Stop what the agent is doing'],
  ['Alt ] / Alt [', 'Next / previous window'],
];

export function useShortcuts(client: StackClient): void {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        document.getElementById('chat-input')?.focus();
        return;
      }
      const state = useAppStore.getState();
      if (event.key === 'Escape' && !state.settingsOpen && state.view.activeMissions.length > 0) {
        // Escape inside an open editor (a cell, a title) only closes the editor.
        const target = event.target as HTMLElement | null;
        if (target?.closest('.window') && target.tagName === 'INPUT') return;
        void client.call('abort', {}).catch(() => {});
        return;
      }
      if (event.altKey && (event.key === ']' || event.key === '[')) {
        const windows = state.view.windows;
        if (windows.length === 0) return;
        event.preventDefault();
        const at = windows.findIndex((win) => win.id === state.focus.windowId);
        const step = event.key === ']' ? 1 : -1;
        const next = windows[(at + step + windows.length) % windows.length]!;
        state.focusWindow(next.id);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [client]);
}
