// The subbar (taskbar): a tab per window — click to bring it to the front and pan to it, × to
// close — and + to open a new notes window (the agent hears of it and can fill it), the terminal,
// the scheduled tasks or the task board (the agent's subagents).
import { useState } from 'preact/hooks';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { PAGE_KIOSK, TERMINAL_HIDDEN } from '../kiosk/kiosk.ts';
import { useAppStore } from '../connection/store.ts';
import { AddWindowMenu } from './AddWindowMenu.tsx';
import { useOpenTerminal } from './useOpenTerminal.ts';
import { KIND_ICONS } from './WindowFrame.tsx';

export function Subbar() {
  const client = useStackClient();
  const all = useAppStore((state) => state.view.windows);
  const windows = TERMINAL_HIDDEN ? all.filter((win) => win.kind !== 'terminal') : all;
  const focused = useAppStore((state) => state.focus.windowId);
  const focusWindow = useAppStore((state) => state.focusWindow);
  const [problem, setProblem] = useState<string | null>(null);
  const close = (id: string) => void client.call('canvas_interaction', { type: 'window_closed', window_id: id }).catch(() => {});
  const openTerminal = useOpenTerminal();
  const attempt = (open: () => Promise<void>) => async () => {
    setProblem(null);
    try {
      await open();
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : 'The window could not be opened.');
    }
  };
  const addNotes = attempt(async () => {
    const opened = await client.call('open_window', { kind: 'notes', title: 'Untitled notes' });
    focusWindow(opened.id);
  });
  const openTasks = attempt(async () => {
    const opened = await client.call('open_window', { kind: 'tasks', title: 'Tasks' });
    focusWindow(opened.id);
  });
  const openBoard = attempt(async () => {
    const opened = await client.call('open_window', { kind: 'board', title: 'Task board' });
    focusWindow(opened.id);
  });
  const openTimeline = attempt(async () => {
    const opened = await client.call('open_window', { kind: 'timeline', title: 'Timeline' });
    focusWindow(opened.id);
  });
  const choices = [
    { label: 'Notes', icon: KIND_ICONS.notes, choose: () => void addNotes() },
    ...(TERMINAL_HIDDEN ? [] : [{ label: 'Terminal', icon: KIND_ICONS.terminal, choose: () => void attempt(openTerminal)() }]),
    { label: 'Tasks', icon: KIND_ICONS.tasks, choose: () => void openTasks() },
    { label: 'Task board', icon: KIND_ICONS.board, choose: () => void openBoard() },
    ...(PAGE_KIOSK ? [] : [{ label: 'Timeline', icon: KIND_ICONS.timeline, choose: () => void openTimeline() }]),
  ];
  return (
    <nav class="subbar" aria-label="Windows">
      <ul class="subbar-tabs">
        {windows.map((win) => (
          <li key={win.id} class={win.id === focused ? 'subbar-tab subbar-tab--focused' : 'subbar-tab'}>
            <button type="button" class="subbar-focus" onClick={() => focusWindow(win.id)} aria-label={`Show ${win.title}`} aria-current={win.id === focused ? 'true' : undefined} title={win.title}>
              <span aria-hidden="true">{KIND_ICONS[win.kind]}</span> <span class="subbar-title">{win.title}</span>
            </button>
            <button type="button" class="subbar-close" onClick={() => close(win.id)} aria-label={`Close ${win.title}`} title="Close">
              ×
            </button>
          </li>
        ))}
      </ul>
      {problem && (
        <span class="subbar-problem" role="alert">
          {problem}
        </span>
      )}
      <AddWindowMenu choices={choices} />
    </nav>
  );
}
