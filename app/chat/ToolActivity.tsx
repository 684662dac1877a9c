// One tool call in the chat: its human title and status; opened, which tool ran, how long it took
// and what it returned.
import type { ChatEntry } from '../events.ts';
import { formatDuration } from './format.ts';

type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;

const STATUS = {
  running: { icon: '', words: 'running' },
  ok: { icon: '✓', words: 'done' },
  error: { icon: '!', words: 'failed' },
} as const;

export function ToolActivity({ entry }: { entry: ToolEntry }) {
  const status = STATUS[entry.status];
  return (
    <details class={`tool tool--${entry.status}`} data-role="tool">
      <summary>
        <span class="tool-status" aria-hidden="true">
          {entry.status === 'running' ? <span class="spinner" /> : status.icon}
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
        <dt>Result</dt>
        <dd>{entry.summary ? <pre class="tool-detail">{entry.summary}</pre> : entry.status === 'running' ? 'Still running…' : 'Nothing returned.'}</dd>
      </dl>
    </details>
  );
}
