// The permission rules: defaults (fixed), the user's (removable) and the agent's (removable by
// the user only). The user adds rules here; the agent can only add.
import { useEffect, useState } from 'preact/hooks';
import type { NewPermissionRule, PermissionRule, RuleMatch } from '../../protocol/permissions.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';

type MatchType = RuleMatch['type'];

const MATCH_LABELS: Record<MatchType, string> = {
  always: 'every call',
  path_prefix: 'paths starting with',
  command: 'commands matching (regex)',
  private_network: 'private network addresses',
  address_not_from_user: 'web addresses you did not give',
  delete_many: 'deleting more than N files',
};

export function PermissionRules() {
  const client = useStackClient();
  const [rules, setRules] = useState<PermissionRule[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [draft, setDraft] = useState({ effect: 'ask' as 'ask' | 'deny', tool: 'bash', match: 'command' as MatchType, value: '', reason: '' });

  const refresh = () => client.call('list_permission_rules', {}).then(setRules, () => setError('Could not load the rules.'));
  useEffect(() => void refresh(), []);

  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      await refresh();
    } catch (failure) {
      setError(failure instanceof StackCallError ? failure.message : 'That did not work.');
    }
  };

  const add = () => {
    const match: RuleMatch =
      draft.match === 'path_prefix'
        ? { type: 'path_prefix', prefix: draft.value }
        : draft.match === 'command'
          ? { type: 'command', pattern: draft.value }
          : draft.match === 'delete_many'
            ? { type: 'delete_many', threshold: Number(draft.value) || 0 }
            : { type: draft.match };
    const rule: NewPermissionRule = { effect: draft.effect, tools: draft.tool.split(',').map((t) => t.trim()).filter(Boolean), match, reason: draft.reason };
    void run(() => client.call('add_permission_rule', rule)).then(() => setDraft((d) => ({ ...d, value: '', reason: '' })));
  };

  return (
    <section class="rules" aria-labelledby="rules-title">
      <h3 id="rules-title">Permission rules</h3>
      <p class="rules-hint">Checked before every action the agent takes. The agent can add rules but never remove them.</p>
      <ul class="rules-list">
        {(rules ?? []).map((rule) => (
          <li key={rule.id} class={`rule rule--${rule.effect}`}>
            <span class="rule-effect">{rule.effect === 'deny' ? 'Block' : 'Ask'}</span>
            <span class="rule-text">
              {rule.tools.join(', ')} · {describeMatch(rule.match)} — {rule.reason}
              <small> ({rule.source === 'default' ? 'built in' : rule.source === 'agent' ? 'added by the agent' : 'yours'})</small>
            </span>
            {rule.source !== 'default' && (
              <button type="button" class="button rule-remove" aria-label={`Remove rule: ${rule.reason}`} onClick={() => void run(() => client.call('remove_permission_rule', { rule_id: rule.id }))}>
                Remove
              </button>
            )}
          </li>
        ))}
      </ul>
      <div class="rules-add" role="group" aria-label="Add a rule">
        <select aria-label="Effect" value={draft.effect} onChange={(e) => setDraft({ ...draft, effect: e.currentTarget.value as 'ask' | 'deny' })}>
          <option value="ask">Ask before</option>
          <option value="deny">Block</option>
        </select>
        <input aria-label="Tools (comma-separated, * for all)" value={draft.tool} onInput={(e) => setDraft({ ...draft, tool: e.currentTarget.value })} />
        <select aria-label="Match" value={draft.match} onChange={(e) => setDraft({ ...draft, match: e.currentTarget.value as MatchType })}>
          {Object.entries(MATCH_LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        {(draft.match === 'path_prefix' || draft.match === 'command' || draft.match === 'delete_many') && (
          <input aria-label="Match value" value={draft.value} onInput={(e) => setDraft({ ...draft, value: e.currentTarget.value })} />
        )}
        <input aria-label="Reason" placeholder="Why (shown when it applies)" value={draft.reason} onInput={(e) => setDraft({ ...draft, reason: e.currentTarget.value })} />
        <button type="button" class="button" onClick={add} disabled={!draft.reason.trim()}>
          Add rule
        </button>
      </div>
      {error && <p class="settings-error" role="alert">{error}</p>}
    </section>
  );
}

function describeMatch(match: RuleMatch): string {
  switch (match.type) {
    case 'always':
      return MATCH_LABELS.always;
    case 'path_prefix':
      return `${MATCH_LABELS.path_prefix} ${match.prefix}`;
    case 'command':
      return `commands matching /${match.pattern.length > 40 ? `${match.pattern.slice(0, 40)}…` : match.pattern}/`;
    case 'private_network':
      return MATCH_LABELS.private_network;
    case 'address_not_from_user':
      return MATCH_LABELS.address_not_from_user;
    case 'delete_many':
      return `deleting more than ${match.threshold} files`;
  }
}
