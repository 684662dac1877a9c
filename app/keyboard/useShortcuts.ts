// Keyboard: Ctrl/Cmd-K focuses the chat, Esc stops the running mission, Alt-] and Alt-[ bring
// the next or previous window to the front and pan to it.
import { useEffect } from 'preact/hooks';
import type { StackClient } from '../connection/stack-client.ts';
import { useAppStore } from '../connection/store.ts';

export const SHORTCUTS: [string, string][] = [
  ['Ctrl/⌘ K', 'Focus the chat'],
  ['Esc', 'Stop what the agent is doing (in the terminal, Esc goes to the shell)'],
  ['Alt ] / Alt [', 'Next / previous window'],
  ['F2 or double-click', 'Rename a window (on its title) or edit a table cell'],
  ['Enter', 'Send the message; in a table, edit the cell'],
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
      if (event.key === 'Escape') {
        // Escape closes a dialog or a popover first; editors stop it themselves.
        const target = event.target as Element | null;
        // In the terminal, Escape is the shell's (vi, less, readline need it).
        if (target?.closest('[data-terminal]')) return;
        if (state.settingsOpen || target?.closest('dialog, [popover]') || document.querySelector('[popover]:popover-open')) return;
        // In a window's own field (a table's filter), Escape belongs to the field.
        if (target?.closest('.window') && target.matches('input, select, textarea')) return;
        if (state.view.activeMissions.length > 0) void client.call('abort', {}).catch(() => {});
        return;
      }
      if (event.altKey && (event.code === 'BracketRight' || event.code === 'BracketLeft' || event.key === ']' || event.key === '[')) {
        const windows = state.view.windows;
        if (windows.length === 0) return;
        event.preventDefault();
        const at = windows.findIndex((win) => win.id === state.focus.windowId);
        const step = event.code === 'BracketRight' || event.key === ']' ? 1 : -1;
        // From nothing focused, forward starts at the first window and backward at the last.
        const next = at < 0 ? (step > 0 ? 0 : windows.length - 1) : (at + step + windows.length) % windows.length;
        state.focusWindow(windows[next]!.id);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [client]);
}
