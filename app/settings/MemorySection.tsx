// Memory: the agent learns from finished turns in batches; "Learn now" runs a batch at once.
import { useState } from 'preact/hooks';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';

export function MemorySection() {
  const client = useStackClient();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<string | null>(null);
  const learn = async () => {
    setBusy(true);
    setResult(null);
    try {
      const outcome = await client.call('learn_now', {});
      setResult(
        outcome.status === 'failed'
          ? `Could not learn this time: ${outcome.error ?? 'the model call failed'}. Nothing was lost; it will try again.`
          : `Learned ${outcome.learnings} thing${outcome.learnings === 1 ? '' : 's'}${outcome.files.length ? `; updated ${outcome.files.join(', ')}` : ''}.`,
      );
    } catch (failure) {
      setResult(failure instanceof StackCallError ? failure.message : 'Could not reach the stack.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="rules" aria-labelledby="memory-title">
      <h3 id="memory-title">Memory</h3>
      <p class="rules-hint">The agent learns from finished conversations every 25 turns and before it compacts its context.</p>
      <button type="button" class="button" onClick={() => void learn()} disabled={busy}>
        {busy ? 'Learning…' : 'Learn now'}
      </button>
      {result && (
        <p class="memory-result" role="status">
          {result}
        </p>
      )}
    </section>
  );
}
