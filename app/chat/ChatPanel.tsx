// The chat: the conversation with streaming replies and tool activity, the composer, stop.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { StackCallError } from '../stack-client.ts';
import { useStackClient } from '../stack-context.ts';
import { visibleChat } from '../events.ts';
import { useAppStore } from '../store.ts';
import type { UploadState } from '../useUploads.ts';
import { ModelBanner } from './ModelBanner.tsx';
import { ChatItem } from './ChatItem.tsx';
import { MissionStatus } from './MissionStatus.tsx';
import { FirstRun, type FirstRunPhase } from './FirstRun.tsx';

export function ChatPanel({ uploads }: { uploads: UploadState }) {
  const client = useStackClient();
  const entries = useAppStore((state) => state.view.chat);
  const quietBeats = useAppStore((state) => state.view.quietBeats);
  const chat = useMemo(() => visibleChat(entries, quietBeats), [entries, quietBeats]);
  const busy = useAppStore((state) => state.view.activeMissions.length > 0);
  const ready = useAppStore((state) => state.connection.state === 'ready');
  const hasDocuments = useAppStore((state) => Object.keys(state.view.documents).length > 0);
  const [firstRun, setFirstRun] = useState<FirstRunPhase>('offer');
  // Offered on an empty stack; once the user takes it, it stays to show what to ask.
  const showFirstRun = firstRun !== 'offer' || (!hasDocuments && chat.length === 0 && ready);
  const [draft, setDraft] = useState('');
  const [sendError, setSendError] = useState<string | null>(null);
  const log = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [chat]);

  const send = async () => {
    const text = draft.trim();
    if (!text || !ready) return;
    setSendError(null);
    try {
      await client.call('mission', { text });
      setDraft('');
    } catch (error) {
      setSendError(error instanceof StackCallError ? error.message : 'The stack did not answer. Reload the page.');
    }
  };
  const stop = () => void client.call('abort', {}).catch(() => {});

  return (
    <aside class="chat" aria-label="Chat">
      <ModelBanner uploads={uploads} />
      <div class="chat-log" ref={log} role="log" aria-live="polite" aria-label="Conversation">
        {chat.length === 0 && <p class="chat-empty">Ask your computer anything. Replies stream here; results open as windows.</p>}
        {chat.map((entry) => (
          <ChatItem key={entry.key} entry={entry} />
        ))}
        {showFirstRun && (
          <FirstRun
            uploads={uploads}
            phase={firstRun}
            setPhase={setFirstRun}
            onSuggest={(text) => {
              setDraft(text);
              input.current?.focus();
            }}
          />
        )}
      </div>
      <form
        class="chat-composer"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        {sendError && <p class="chat-send-error" role="alert">{sendError}</p>}
        {uploads.errors.map((message) => (
          <p key={message} class="chat-send-error" role="alert">
            {message}
          </p>
        ))}
        {uploads.busy && <p class="chat-uploading" role="status">Adding {uploads.busy}…</p>}
        <MissionStatus />
        <textarea
          ref={input}
          id="chat-input"
          aria-label="Message"
          placeholder={ready ? 'Message your computer…' : 'Starting…'}
          value={draft}
          disabled={!ready}
          rows={3}
          onInput={(event) => setDraft(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault();
              void send();
            }
          }}
        />
        <div class="chat-actions">
          <label class="button chat-attach">
            Attach
            <input
              type="file"
              multiple
              aria-label="Attach files"
              accept=".pdf,.png,.jpg,.jpeg,.webp,.tif,.tiff,.txt,.md,.csv,.xlsx,.docx"
              onChange={(event) => {
                const input = event.currentTarget;
                void uploads.upload(Array.from(input.files ?? [])).then(() => (input.value = ''));
              }}
            />
          </label>
          <span class="topbar-spacer" />
          {busy && (
            <button type="button" class="button button--danger" onClick={stop} aria-label="Stop">
              Stop
            </button>
          )}
          <button type="submit" class="button button--primary" disabled={!ready || !draft.trim()} aria-label="Send">
            Send
          </button>
        </div>
      </form>
    </aside>
  );
}
