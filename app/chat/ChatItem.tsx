// One entry of the conversation: the user's message (queued until its turn), a streamed reply, a
// tool call, a hook's run, a notice, an error with Retry, a permission question, a download, a mission's spend.
import { memo } from 'preact/compat';
import { useState } from 'preact/hooks';
import { assertNever } from '../../protocol/errors.ts';
import type { ChatEntry } from '../connection/events.ts';
import { Markdown } from '../common/Markdown.tsx';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import { DownloadLink } from './DownloadLink.tsx';
import { formatSpend } from './format.ts';
import { HookActivity } from './HookActivity.tsx';
import { PermissionPrompt } from './PermissionPrompt.tsx';
import { ToolActivity } from './ToolActivity.tsx';

// Memoised: the fold keeps an unchanged entry the same object, so each new event redraws only the
// entries it changed, not the whole conversation (hundreds after a big upload).
export const ChatItem = memo(function ChatItem({ entry }: { entry: ChatEntry }) {
  switch (entry.kind) {
    case 'user':
      return (
        <div class={entry.queued ? 'msg msg--user msg--queued' : 'msg msg--user'} data-role="user" data-recorded={entry.recorded}>
          {entry.recorded && <span class="msg-recorded">Recorded demo · request</span>}
          {entry.text}
          {entry.queued && <span class="msg-queued"> · queued</span>}
        </div>
      );
    case 'assistant':
      return (
        <div class={entry.streaming ? 'msg msg--assistant msg--streaming' : 'msg msg--assistant'} data-role="assistant" aria-busy={entry.streaming} data-recorded={entry.recorded}>
          {entry.recorded && <span class="msg-recorded">Recorded reply · not from a model</span>}
          <Markdown text={entry.text} />
        </div>
      );
    case 'tool':
      return <ToolActivity entry={entry} />;
    case 'hook':
      return <HookActivity entry={entry} />;
    case 'notice':
      return (
        <div class="msg msg--notice" data-role="notice">
          {entry.text}
          {entry.document && <OpenDocument path={entry.document} />}
        </div>
      );
    case 'permission':
      return <PermissionPrompt entry={entry} />;
    case 'download':
      return <DownloadLink entry={entry} />;
    case 'error':
      return (
        <div class="msg msg--error" role="alert" data-role="error" data-code={entry.code}>
          {entry.text}
          {entry.retry_text && <RetryButton text={entry.retry_text} />}
        </div>
      );
    case 'usage':
      return (
        <div class="msg-usage" data-role="usage" title="Tokens and cost of this mission">
          {formatSpend(entry)}
        </div>
      );
    default:
      return assertNever(entry, 'chat entry');
  }
});

/** Sends the failed message again, as it was; once, so a double click does not queue it twice. */
function RetryButton({ text }: { text: string }) {
  const client = useStackClient();
  const [state, setState] = useState<'idle' | 'sending' | 'sent' | 'failed'>('idle');
  const retry = () => {
    setState('sending');
    client.call('mission', { text }).then(
      () => setState('sent'),
      () => setState('failed'),
    );
  };
  if (state === 'sent') return <span class="msg-retry-state"> Sent again.</span>;
  return (
    <button type="button" class="button msg-retry" disabled={state === 'sending'} onClick={retry}>
      {state === 'failed' ? 'Retry again' : 'Retry'}
    </button>
  );
}

/** Shows an added document whose window did not open by itself (a big upload opens only a few). */
function OpenDocument({ path }: { path: string }) {
  const client = useStackClient();
  const focusWindow = useAppStore((state) => state.focusWindow);
  const [problem, setProblem] = useState<string | null>(null);
  const open = async () => {
    setProblem(null);
    try {
      focusWindow((await client.call('open_window', { kind: 'document', path })).id);
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : 'The document could not be shown.');
    }
  };
  return (
    <>
      {' '}
      <button type="button" class="link-button" onClick={() => void open()}>
        Open
      </button>
      {problem && <span role="alert"> {problem}</span>}
    </>
  );
}
