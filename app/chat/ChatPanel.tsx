// The chat: the conversation with streaming replies and tool activity, and the composer below it.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { visibleChat } from '../connection/events.ts';
import { useAppStore } from '../connection/store.ts';
import type { Uploader } from '../connection/useUploads.ts';
import { ModelBanner } from './ModelBanner.tsx';
import { ChatItem } from './ChatItem.tsx';
import { Composer, type Suggestion } from './Composer.tsx';
import { FirstRun, type FirstRunPhase } from './FirstRun.tsx';

export function ChatPanel({ uploader }: { uploader: Uploader }) {
  const entries = useAppStore((state) => state.view.chat);
  const quietBeats = useAppStore((state) => state.view.quietBeats);
  const chat = useMemo(() => visibleChat(entries, quietBeats), [entries, quietBeats]);
  const ready = useAppStore((state) => state.connection.state === 'ready');
  const hasDocuments = useAppStore((state) => Object.keys(state.view.documents).length > 0);
  const [firstRun, setFirstRun] = useState<FirstRunPhase>('offer');
  // Offered on an empty stack; once the user takes it, it stays to show what to ask.
  const showFirstRun = firstRun !== 'offer' || (!hasDocuments && chat.length === 0 && ready);
  const [suggestion, setSuggestion] = useState<Suggestion | null>(null);
  const log = useRef<HTMLDivElement>(null);

  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [chat]);

  return (
    <aside class="chat" aria-label="Chat">
      <ModelBanner uploader={uploader} />
      <div class="chat-log" ref={log} role="log" aria-live="polite" aria-label="Conversation">
        {chat.length === 0 && <p class="chat-empty">Ask your computer anything. Replies stream here; results open as windows.</p>}
        {chat.map((entry) => (
          <ChatItem key={entry.key} entry={entry} />
        ))}
        {showFirstRun && <FirstRun uploader={uploader} phase={firstRun} setPhase={setFirstRun} onSuggest={(text) => setSuggestion({ text })} />}
      </div>
      <Composer uploader={uploader} suggestion={suggestion} />
    </aside>
  );
}
