// One tool call in the chat: its human title and status; opened, which tool ran and with what, what
// it printed as it ran, how long it took and what it returned (`.tool-detail`: the summary).
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { ChatEntry } from '../connection/events.ts';
import { outputText } from '../connection/tool-output.ts';
import { formatDuration } from './format.ts';
import { Spinner } from '../common/Spinner.tsx';

type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;

const STATUS = {
  running: { icon: '', words: 'running' },
  ok: { icon: '✓', words: 'done' },
  error: { icon: '!', words: 'failed' },
} as const;

export function ToolActivity({ entry }: { entry: ToolEntry }) {
  const status = STATUS[entry.status];
  const printed = outputText(entry.output);
  // The whole result when the worker sent it and the output streamed here did not already show it.
  const full = printed ? '' : entry.result;
  return (
    <details class={`tool tool--${entry.status}`} data-role="tool">
      <summary>
        <span class="tool-status" aria-hidden="true">
          {entry.status === 'running' ? <Spinner /> : status.icon}
        </span>
        <span class="tool-title">{entry.title}</span>
        <span class="visually-hidden">, {status.words}</span>
        {entry.duration_ms !== null && <span class="tool-time">{formatDuration(entry.duration_ms)}</span>}
      </summary>
      <dl class="tool-facts">
        <dt>Tool</dt>
        <dd>
          <code>{entry.name}</code>
        </dd>
        {entry.detail && (
          <>
            <dt>Input</dt>
            <dd>
              <pre class="tool-text tool-input">{entry.detail}</pre>
            </dd>
          </>
        )}
        {printed && (
          <>
            <dt>Output</dt>
            <dd>
              <LiveOutput text={printed} />
            </dd>
          </>
        )}
        <dt>Result</dt>
        <dd>
          {entry.summary ? <pre class="tool-detail">{entry.summary}</pre> : entry.status === 'running' ? 'Still running…' : full ? null : 'Nothing returned.'}
          {full && <pre class="tool-text tool-result">{full}</pre>}
        </dd>
      </dl>
    </details>
  );
}

/** What a running tool prints, kept scrolled to the newest line unless the reader scrolled up. */
function LiveOutput({ text }: { text: string }) {
  const pre = useRef<HTMLPreElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    if (pinned.current && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text]);
  return (
    // Streams while the tool runs; the conversation's live region should not read out every line.
    <pre
      ref={pre}
      class="tool-text tool-output"
      aria-live="off"
      data-role="tool-output"
      onScroll={(event) => {
        const el = event.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
      }}
    >
      {text}
    </pre>
  );
}
