// The heartbeat's checklist: what the agent looks at on each of its own check-ins (e.g. "unpaid
// invoices due this week"). With nothing to do it answers HEARTBEAT_OK, which the chat does not show.
import { useEffect, useState } from 'preact/hooks';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { SectionMessage, type SectionMessageState } from './SectionMessage.tsx';

export function HeartbeatChecklist() {
  const client = useStackClient();
  const [text, setText] = useState<string | null>(null);
  const [message, setMessage] = useState<SectionMessageState | null>(null);
  useEffect(() => {
    client.call('get_heartbeat_checklist', {}).then(
      (loaded) => setText(loaded.text),
      () => setMessage({ error: true, text: 'Could not load the checklist.' }),
    );
  }, []);
  const save = async () => {
    setMessage(null);
    try {
      await client.call('save_heartbeat_checklist', { text: text ?? '' });
      setMessage({ error: false, text: 'Saved: the next beat reads it.' });
    } catch (failure) {
      setMessage({ error: true, text: failure instanceof StackCallError ? failure.message : 'Could not save the checklist.' });
    }
  };
  return (
    <section class="rules" aria-labelledby="heartbeat-title">
      <h3 id="heartbeat-title">Heartbeat checklist</h3>
      <p class="rules-hint">What the agent checks on each heartbeat (set the minutes above). When nothing needs doing, the beat leaves no trace in the chat.</p>
      <textarea class="hooks-editor" aria-label="Heartbeat checklist" rows={4} placeholder="- Unpaid invoices due in the next 3 days: remind me" value={text ?? ''} disabled={text === null} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="button" class="button" disabled={text === null} onClick={() => void save()}>
        Apply checklist
      </button>
      <SectionMessage message={message} />
    </section>
  );
}
