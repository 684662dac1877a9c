// The chrome every canvas window shares: title bar (the drag handle), rename (double-click or F2
// on the title), maximise / restore, close, resize handles; a press anywhere brings it to the
// front. The body is the window kind's own.
import { NodeResizer } from '@xyflow/react';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { CanvasWindow } from '../../protocol/windows.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';

export const KIND_ICONS: Record<CanvasWindow['kind'], string> = { notes: '✎', table: '▦', chart: '◔', document: '▤', terminal: '❯', tasks: '◷', board: '☷', timeline: '↺' };
const KIND_NAMES: Record<CanvasWindow['kind'], string> = { notes: 'Notes', table: 'Table', chart: 'Chart', document: 'Document', terminal: 'Terminal', tasks: 'Tasks', board: 'Task board', timeline: 'Timeline' };

interface Props {
  window: CanvasWindow;
  selected: boolean;
  children: ComponentChildren;
  /** Buttons of the window kind, shown in the title bar. */
  tools?: ComponentChildren;
  /** The body scrolls with nothing focusable in it (notes, documents): keyboard users can focus it to scroll. */
  scrolls?: boolean;
}

export function WindowFrame({ window, selected, children, tools, scrolls = false }: Props) {
  const client = useStackClient();
  const [renaming, setRenaming] = useState(false);
  const maximised = useAppStore((state) => state.maximised === window.id);
  const toggleMaximised = useAppStore((state) => state.toggleMaximised);
  const raise = useAppStore((state) => state.raise);
  const close = () => void client.call('canvas_interaction', { type: 'window_closed', window_id: window.id }).catch(() => {});
  const rename = (title: string) => {
    setRenaming(false);
    const next = title.trim();
    if (next && next !== window.title) void client.call('canvas_interaction', { type: 'window_renamed', window_id: window.id, title: next }).catch(() => {});
  };
  return (
    <section
      class={selected ? 'window window--focused' : 'window'}
      aria-label={`${KIND_NAMES[window.kind]} window: ${window.title}`}
      data-window-id={window.id}
      data-kind={window.kind}
      onPointerDownCapture={() => raise(window.id)}
    >
      <NodeResizer minWidth={220} minHeight={140} isVisible={selected && !maximised} lineClassName="window-resize-line" handleClassName="window-resize-handle" />
      <header class="window-titlebar" onDblClick={(event) => (event.target as HTMLElement).closest('button, input') === null && setRenaming(true)}>
        <span class="window-kind" aria-hidden="true">
          {KIND_ICONS[window.kind]}
        </span>
        {renaming ? (
          <input
            class="window-rename nodrag"
            aria-label="Window title"
            defaultValue={window.title}
            maxLength={120}
            autoFocus
            onFocus={(e) => e.currentTarget.select()}
            onBlur={(e) => rename(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') rename(e.currentTarget.value);
              if (e.key === 'Escape') {
                // Only the editor closes; Escape elsewhere stops the agent.
                e.stopPropagation();
                setRenaming(false);
              }
            }}
          />
        ) : (
          <h2
            class="window-title"
            title="Double-click or press F2 to rename"
            tabIndex={0}
            onKeyDown={(e) => e.key === 'F2' && setRenaming(true)}
          >
            {window.title}
          </h2>
        )}
        {tools}
        <button
          type="button"
          class="window-button nodrag"
          aria-label={maximised ? `Restore ${window.title}` : `Maximise ${window.title}`}
          title={maximised ? 'Restore' : 'Maximise'}
          onClick={() => toggleMaximised(window.id)}
        >
          {maximised ? '❐' : '□'}
        </button>
        <button type="button" class="window-button window-button--close nodrag" aria-label={`Close ${window.title}`} title="Close" onClick={close}>
          ×
        </button>
      </header>
      <div class="window-body nowheel nodrag" tabIndex={scrolls ? 0 : undefined} aria-label={scrolls ? `${window.title}, content` : undefined} role={scrolls ? 'group' : undefined}>
        {children}
      </div>
    </section>
  );
}
