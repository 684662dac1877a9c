// A notes window on the canvas: title bar (drag handle), close, Markdown body, resize handles.
import { NodeResizer, type Node, type NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import type { NotesWindow } from '../../worker/protocol.ts';
import { Markdown } from '../Markdown.tsx';
import { useStackClient } from '../stack-context.ts';

export type NotesWindowNodeType = Node<{ window: NotesWindow }, 'notes'>;

export const NotesWindowNode = memo(function NotesWindowNode({ data, selected }: NodeProps<NotesWindowNodeType>) {
  const client = useStackClient();
  const { window } = data;
  const close = () => void client.call('canvas_interaction', { type: 'window_closed', window_id: window.id }).catch(() => {});
  return (
    <section class={selected ? 'window window--focused' : 'window'} aria-label={`Notes window: ${window.title}`} data-window-id={window.id}>
      <NodeResizer minWidth={220} minHeight={140} isVisible={selected} lineClassName="window-resize-line" handleClassName="window-resize-handle" />
      <header class="window-titlebar">
        <span class="window-kind" aria-hidden="true">✎</span>
        <h2 class="window-title">{window.title}</h2>
        <button type="button" class="window-close nodrag" aria-label={`Close ${window.title}`} title="Close" onClick={close}>
          ×
        </button>
      </header>
      <div class="window-body nowheel nodrag">
        <Markdown text={window.content} />
      </div>
    </section>
  );
});
