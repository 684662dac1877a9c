// One run of a user's hook in the chat: which event, what it decided; opened, the command, what it
// printed and how long it took. Quiet when it simply ran; marked when it blocked or failed.
import type { ChatEntry } from '../connection/events.ts';
import { formatDuration } from './format.ts';

type HookEntry = Extract<ChatEntry, { kind: 'hook' }>;

export function HookActivity({ entry }: { entry: HookEntry }) {
  const { run } = entry;
  const output = [run.stdout.trim() && `stdout:\n${run.stdout.trim()}`, run.stderr.trim() && `stderr:\n${run.stderr.trim()}`].filter(Boolean).join('\n');
  const tone = run.outcome === 'ok' ? 'ok' : run.outcome === 'blocked' ? 'blocked' : 'error';
  return (
    <details class={`tool hook hook--${tone}`} data-role="hook" data-outcome={run.outcome}>
      <summary>
        <span class="tool-status" aria-hidden="true">
          {tone === 'ok' ? '✓' : tone === 'blocked' ? '⛔' : '!'}
        </span>
        <span class="tool-title">
          Hook {when(run.event, entry.tool)}: {decided(run)}
        </span>
        {run.duration_ms > 0 && <span class="tool-time">{formatDuration(run.duration_ms)}</span>}
      </summary>
      <dl class="tool-facts">
        {run.command && (
          <>
            <dt>Command</dt>
            <dd>
              <pre class="tool-text tool-input">{run.command}</pre>
            </dd>
          </>
        )}
        <dt>Output</dt>
        <dd>{output ? <pre class="tool-text tool-result">{output}</pre> : 'Nothing printed.'}</dd>
      </dl>
    </details>
  );
}

function when(event: HookEntry['run']['event'], tool: string | undefined): string {
  switch (event) {
    case 'PreToolUse':
      return `before ${tool ?? 'a tool'}`;
    case 'PostToolUse':
      return `after ${tool ?? 'a tool'}`;
    case 'UserPromptSubmit':
      return 'on your message';
    case 'Stop':
      return 'before stopping';
  }
}

function decided(run: HookEntry['run']): string {
  switch (run.outcome) {
    case 'ok':
      return 'ran';
    case 'blocked':
      return run.event === 'PreToolUse' ? 'blocked the call' : run.event === 'PostToolUse' ? 'objected' : run.event === 'UserPromptSubmit' ? 'stopped the message' : 'sent the agent back to work';
    case 'failed':
      return `failed (exit ${run.exit_code ?? 'unknown'}${run.exit_code === null ? ', killed by a signal' : ''})`;
    case 'timed_out':
      return 'killed at its time limit';
    case 'unavailable':
      return 'could not run';
    case 'cancelled':
      return 'stopped with the mission';
  }
}
