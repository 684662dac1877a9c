// The chat's composer: the message being written, Send and Stop, attaching files and their
// refusals. Its own component, so a key typed redraws the composer alone, never the conversation
// above it (hundreds of entries after a big upload).
import { useEffect, useRef, useState } from 'preact/hooks';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import { useUploadProgress, type Uploader } from '../connection/useUploads.ts';
import { MissionStatus } from './MissionStatus.tsx';

/** A message offered to the user (a getting-started question): it fills the box, to send or edit. Each one a new object. */
export interface Suggestion {
  text: string;
}

export function Composer({ uploader, suggestion }: { uploader: Uploader; suggestion: Suggestion | null }) {
  const client = useStackClient();
  const busy = useAppStore((state) => state.view.activeMissions.length > 0);
  const ready = useAppStore((state) => state.connection.state === 'ready');
  const uploads = useUploadProgress(uploader);
  const [draft, setDraft] = useState('');
  const [sendError, setSendError] = useState<string | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    if (!suggestion) return;
    setDraft(suggestion.text);
    input.current?.focus();
  }, [suggestion]);

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
              const picker = event.currentTarget;
              void uploader.upload(Array.from(picker.files ?? [])).then(() => (picker.value = ''));
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
  );
}
