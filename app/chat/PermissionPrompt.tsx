// Asks the user before a tool call that a permission rule marks "ask" (e.g. deleting many files).
import type { ChatEntry } from '../connection/events.ts';
import { useStackClient } from '../connection/stack-context.ts';

type PermissionEntry = Extract<ChatEntry, { kind: 'permission' }>;

export function PermissionPrompt({ entry }: { entry: PermissionEntry }) {
  const client = useStackClient();
  const answer = (allow: boolean) => void client.call('answer_permission', { ask_id: entry.ask_id, allow }).catch(() => {});
  return (
    <div class={`permission permission--${entry.state}`} role="group" aria-label="Permission request" data-role="permission">
      <p>
        <strong>{entry.title}</strong>
        <br />
        {entry.reason} Allow it?
      </p>
      {entry.state === 'pending' ? (
        <div class="permission-actions">
          <button type="button" class="button" onClick={() => answer(false)}>
            Don’t allow
          </button>
          <button type="button" class="button button--primary" onClick={() => answer(true)}>
            Allow
          </button>
        </div>
      ) : (
        <p class="permission-state">{entry.state === 'allowed' ? 'Allowed.' : 'Not allowed.'}</p>
      )}
    </div>
  );
}
