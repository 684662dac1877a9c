// Hooks: commands the user sets to run in the computer before and after the agent's tool calls,
// on each message and before a mission stops. Edited as their JSON file; checked before saving.
import { useEffect, useState } from 'preact/hooks';
import type { HooksInfo } from '../../protocol/hooks.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { SectionMessage, type SectionMessageState } from './SectionMessage.tsx';

const EXAMPLE = `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "bash",
        "hooks": [{ "type": "command", "command": "grep -q 'rm .*/workspace/archive' && { echo 'archive is read-only' >&2; exit 2; } || exit 0", "timeout": 10 }]
      }
    ]
  }
}`;

const WHEN: Record<HooksInfo['hooks'][number]['event'], string> = {
  PreToolUse: 'Before',
  PostToolUse: 'After',
  UserPromptSubmit: 'On each message',
  Stop: 'Before the agent stops',
};

export function HooksSection() {
  const client = useStackClient();
  const [info, setInfo] = useState<HooksInfo | null>(null);
  const [text, setText] = useState('');
  const [message, setMessage] = useState<SectionMessageState | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    client.call('get_hooks', {}).then(
      (loaded) => {
        setInfo(loaded);
        setText(loaded.text);
        if (loaded.error) setMessage({ error: true, text: `${loaded.error} None of them runs until this is fixed.` });
      },
      () => setMessage({ error: true, text: 'Could not load the hooks.' }),
    );
  }, []);

  const save = async () => {
    setSaving(true);
    setMessage(null);
    try {
      const saved = await client.call('save_hooks', { text });
      setInfo(saved);
      setText(saved.text);
      setMessage({ error: false, text: saved.hooks.length ? `Saved: ${saved.hooks.length} hook${saved.hooks.length === 1 ? '' : 's'}.` : 'Saved: no hooks.' });
    } catch (failure) {
      setMessage({ error: true, text: failure instanceof StackCallError ? failure.message : 'Could not save the hooks.' });
    } finally {
      setSaving(false);
    }
  };

  return (
    <section class="rules hooks" aria-labelledby="hooks-title">
      <h3 id="hooks-title">Hooks</h3>
      <p class="rules-hint">
        Commands run in the computer with the event as JSON on stdin: before and after a tool call (<code>matcher</code>: a tool name or regex), on each message, before the agent stops. Exit 2 blocks, and what
        the hook prints on stderr is the reason; other output is kept in the chat. A before-tool hook that times out blocks its call. Hooks can block, never allow: the permission rules still apply.
      </p>
      {info && info.hooks.length > 0 && (
        <ul class="rules-list" aria-label="Hooks in effect">
          {info.hooks.map((hook, i) => (
            <li key={i} class="rule">
              <span class="rule-effect">{WHEN[hook.event]}</span>
              <span class="rule-text">
                {hook.matcher !== undefined && <>{hook.matcher || '*'} · </>}
                <code>{hook.command}</code> <small>({hook.timeout} s)</small>
              </span>
            </li>
          ))}
        </ul>
      )}
      <textarea
        class="hooks-editor"
        aria-label="Hooks file (JSON)"
        spellcheck={false}
        rows={8}
        placeholder={EXAMPLE}
        value={text}
        disabled={!info}
        onInput={(event) => setText(event.currentTarget.value)}
      />
      <button type="button" class="button" disabled={saving || !info} onClick={() => void save()}>
        {saving ? 'Applying…' : 'Apply hooks'}
      </button>
      <SectionMessage message={message} />
    </section>
  );
}
