// A notes window: Markdown the agent wrote, rendered and sanitised. The content is the agent's;
// the user reads it here and asks for changes in the chat.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { Markdown } from '../Markdown.tsx';
import type { NotesWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

export const NotesWindowNode = memo(function NotesWindowNode({ data, selected }: NodeProps<NotesWindowNodeType>) {
  return (
    <WindowFrame window={data.window} selected={selected} scrolls>
      {data.window.content.trim() ? <Markdown text={data.window.content} /> : <p class="window-empty">Empty. Ask the agent to write here.</p>}
    </WindowFrame>
  );
});
