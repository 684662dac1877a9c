// The subbar (taskbar): a tab per window — click to bring it to the front, × to close — and +
// to open a new notes window.
import type { CanvasWindow } from '../../worker/protocol.ts';
import { useStackClient } from '../stack-context.ts';
import { useAppStore } from '../store.ts';

const ICONS: Record<CanvasWindow['kind'], string> = { notes: '✎', table: '▦', chart: '◔', document: '▤' };

export function Subbar() {
  const client = useStackClient();
  const windows = useAppStore((state) => state.view.windows);
  const focused = useAppStore((state) => state.focus.windowId);
  const focusWindow = useAppStore((state) => state.focusWindow);
  const close = (id: string) => void client.call('canvas_interaction', { type: 'window_closed', window_id: id }).catch(() => {});
  const add = async () => {
    const opened = await client.call('open_window', { kind: 'notes', title: 'Untitled notes' }).catch(() => null);
    if (opened) focusWindow(opened.id);
  };
  return (
    <nav class="subbar" aria-label="Windows">
      <ul class="subbar-tabs">
        {windows.map((win) => (
          <li key={win.id} class={win.id === focused ? 'subbar-tab subbar-tab--focused' : 'subbar-tab'}>
            <button type="button" class="subbar-focus" onClick={() => focusWindow(win.id)} aria-label={`Show ${win.title}`}>
              <span aria-hidden="true">{ICONS[win.kind]}</span> {win.title}
            </button>
            <button type="button" class="subbar-close" onClick={() => close(win.id)} aria-label={`Close ${win.title}`}>
              ×
            </button>
          </li>
        ))}
      </ul>
      <button type="button" class="subbar-add" onClick={() => void add()} aria-label="New notes window" title="New notes window">
        +
      </button>
    </nav>
  );
}
