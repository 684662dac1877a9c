// A terminal window: the computer's serial root shell in xterm.js (loaded when the first terminal
// opens). Until the computer is ready, an overlay says what it is doing.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useRef } from 'preact/hooks';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import { ComputerOverlay } from './ComputerOverlay.tsx';
import { useXterm } from './useXterm.ts';
import type { TerminalWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

export const TerminalWindowNode = memo(function TerminalWindowNode({ data, selected }: NodeProps<TerminalWindowNodeType>) {
  const client = useStackClient();
  const computer = useAppStore((state) => state.view.computer);
  const ready = computer?.state === 'ready';
  const host = useRef<HTMLDivElement>(null);
  const { term, failed } = useXterm(host, client.terminal, data.window.id, ready);

  return (
    <WindowFrame window={data.window} selected={selected}>
      <div
        ref={host}
        class="terminal-host nokey"
        role="region"
        aria-label="Terminal: root shell on the computer"
        data-terminal
        // Anywhere in the window's body, not only on the text, gives the shell the keyboard.
        onClick={() => term?.focus()}
      />
      {failed ? (
        <p class="terminal-overlay window-problem" role="alert">
          {failed}
        </p>
      ) : (
        !ready && <ComputerOverlay status={computer} />
      )}
    </WindowFrame>
  );
});
