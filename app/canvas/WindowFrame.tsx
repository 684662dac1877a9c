// The chrome every canvas window shares: title bar (the drag handle), rename by double-click,
// close, resize handles. The body is the window kind's own.
import { NodeResizer } from '@xyflow/react';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { CanvasWindow } from '../../worker/protocol.ts';
import { useStackClient } from '../stack-context.ts';
import { useAppStore } from '../store.ts';

const ICONS: Record<CanvasWindow['kind'], string> = { notes: '✎', table: '▦', chart: '◔', document: '▤' };
const KIND_NAMES: Record<CanvasWindow['kind'], string> = { notes: 'Notes', table: 'Table', chart: 'Chart', document: 'Document' };

export function WindowFrame({ window, selected, children, tools }: { window: CanvasWindow; selected: boolean; children: ComponentChildren; tools?: ComponentChildren }) {
  const client = useStackClient();
  const [renaming, setRenaming] = useState(false);
  const maximised = useAppStore((state) => state.maximised === window.id);
  const toggleMaximised = useAppStore((state) => state.toggleMaximised);
  const close = () => void client.call('canvas_interaction', { type: 'window_closed', window_id: window.id }).catch(() => {});
  const rename = (title: string) => {
    setRenaming(false);
    const next = title.trim();
    if (next && next !== window.title) void client.call('canvas_interaction', { type: 'window_renamed', window_id: window.id, title: next }).catch(() => {});
  };
  return (
    <section class={selected ? 'window window--focused' : 'window'} aria-label={`${KIND_NAMES[window.kind]} window: ${window.title}`} data-window-id={window.id} data-kind={window.kind}>
      <NodeResizer minWidth={220} minHeight={140} isVisible={selected && !maximised} lineClassName="window-resize-line" handleClassName="window-resize-handle" />
      <header class="window-titlebar">
        <span class="window-kind" aria-hidden="true">
          {ICONS[window.kind]}
        </span>
        {renaming ? (
          <input
            class="window-rename nodrag"
            aria-label="Window title"
            defaultValue={window.title}
            autoFocus
            onBlur={(e) => rename(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') rename(e.currentTarget.value);
              if (e.key === 'Escape') setRenaming(false);
            }}
          />
        ) : (
          <h2 class="window-title" onDblClick={() => setRenaming(true)} title="Double-click to rename">
            {window.title}
          </h2>
        )}
        {tools}
        <button
          type="button"
          class="window-close nodrag"
          aria-label={maximised ? `Restore ${window.title}` : `Maximise ${window.title}`}
          title={maximised ? 'Restore' : 'Maximise'}
          onClick={() => toggleMaximised(window.id)}
        >
          {maximised ? '❐' : '□'}
        </button>
        <button type="button" class="window-close nodrag" aria-label={`Close ${window.title}`} title="Close" onClick={close}>
          ×
        </button>
      </header>
      <div class="window-body nowheel nodrag">{children}</div>
    </section>
  );
}
