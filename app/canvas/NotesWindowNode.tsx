// A notes window: Markdown the agent wrote.
import type { Node, NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import type { NotesWindow } from '../../worker/protocol.ts';
import { Markdown } from '../Markdown.tsx';
import { WindowFrame } from './WindowFrame.tsx';

export type NotesWindowNodeType = Node<{ window: NotesWindow }, 'notes'>;

export const NotesWindowNode = memo(function NotesWindowNode({ data, selected }: NodeProps<NotesWindowNodeType>) {
  return (
    <WindowFrame window={data.window} selected={selected}>
      <Markdown text={data.window.content} />
    </WindowFrame>
  );
});
