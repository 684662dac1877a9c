// A notes window: Markdown, rendered and sanitised. The agent writes it; the user can edit it too
// (Edit), and each pause in typing saves the text, which the agent hears of in its next turn.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Markdown } from '../common/Markdown.tsx';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import type { NotesWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

const SAVE_AFTER_MS = 600;

export const NotesWindowNode = memo(function NotesWindowNode({ data, selected }: NodeProps<NotesWindowNodeType>) {
  const { window } = data;
  const client = useStackClient();
  const [draft, setDraft] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const lastSaved = useRef(window.content);
  const area = useRef<HTMLTextAreaElement>(null);

  const save = async (text: string) => {
    if (timer.current) clearTimeout(timer.current);
    timer.current = null;
    if (text === lastSaved.current) return;
    setSaving(true);
    try {
      await client.call('canvas_interaction', { type: 'notes_edited', window_id: window.id, content: text });
      lastSaved.current = text;
      setProblem(null);
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : 'The notes were not saved.');
    } finally {
      setSaving(false);
    }
  };

  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
  }, []);
  useEffect(() => {
    if (draft !== null) area.current?.focus();
  }, [draft !== null]);
  // The agent rewrote the notes while they were not being edited: that is the new baseline.
  useEffect(() => {
    if (draft === null) lastSaved.current = window.content;
  }, [window.content, draft]);

  const editing = draft !== null;
  const agentChanged = editing && window.content !== lastSaved.current;
  const finish = async () => {
    if (draft !== null) await save(draft);
    setDraft(null);
  };

  const tools = (
    <div class="table-tools nodrag" role="group" aria-label="Notes">
      {editing && <span class="window-status" aria-live="polite">{saving ? 'Saving…' : 'Saved'}</span>}
      <button
        type="button"
        class="window-tool"
        aria-pressed={editing}
        aria-label={editing ? `Done editing ${window.title}` : `Edit ${window.title}`}
        onClick={() => (editing ? void finish() : setDraft(window.content))}
      >
        {editing ? 'Done' : 'Edit'}
      </button>
    </div>
  );

  return (
    <WindowFrame window={window} selected={selected} scrolls={!editing} tools={tools}>
      {problem && (
        <p class="window-problem" role="alert">
          {problem}
        </p>
      )}
      {agentChanged && (
        <p class="window-problem" role="status">
          The agent changed these notes while you were editing; saving keeps your version.
        </p>
      )}
      {editing ? (
        <textarea
          ref={area}
          class="notes-editor nodrag nowheel"
          aria-label={`Markdown of ${window.title}`}
          value={draft}
          spellcheck
          onInput={(event) => {
            const text = (event.target as HTMLTextAreaElement).value;
            setDraft(text);
            if (timer.current) clearTimeout(timer.current);
            timer.current = setTimeout(() => void save(text), SAVE_AFTER_MS);
          }}
          onKeyDown={(event) => {
            // Esc leaves the editor (after saving) instead of stopping the agent.
            if (event.key === 'Escape') {
              event.stopPropagation();
              void finish();
            }
          }}
        />
      ) : window.content.trim() ? (
        <Markdown text={window.content} />
      ) : (
        <p class="window-empty">Empty. Write here with Edit, or ask the agent.</p>
      )}
    </WindowFrame>
  );
});
