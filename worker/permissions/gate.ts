// The permission gate: every tool call passes here first. It logs each decision as an event,
// blocks what a deny rule matches, and waits for the user's answer on an ask rule.
import type { StackEventBody } from '../../protocol/events.ts';
import type { StackStorage } from '../../storage/json-files.ts';
import { commandPatternProblem, DEFAULT_RULES, evaluate, hostOf, MCP_RULE_ID, ruleSchema, type PermissionRule } from './rules.ts';
import { BadRequestError } from '../request-error.ts';

const FILE = 'permissions.json';

interface RulesFile {
  version: 1;
  rules: PermissionRule[];
}

export type NewRule = Omit<PermissionRule, 'id' | 'source'>;
export type GateVerdict = { allow: true } | { allow: false; reason: string };

export class PermissionError extends BadRequestError {}

export interface PermissionGate {
  rules(): PermissionRule[];
  /** Validates and stores a rule. The agent and the user can both add. */
  addRule(rule: NewRule, source: 'user' | 'agent'): Promise<PermissionRule>;
  /** Only the user removes rules, and never a default one. */
  removeRule(ruleId: string): Promise<void>;
  /**
   * Must not throw. Waits for the user when a rule says ask; an abort denies. `userHosts` are the
   * hosts the user named in the conversation; a host the user allows with a click joins them for
   * as long as the stack is open.
   */
  check(call: { mission_id: string; tool: string; title: string; input: unknown }, signal: AbortSignal, userHosts?: ReadonlySet<string>): Promise<GateVerdict>;
  /** Returns false when nothing waits under that id. */
  answer(askId: string, allow: boolean): boolean;
}

/**
 * `kiosk`: whether the stack is a kiosk now; then a rule that would ask refuses instead (a visitor
 * is never asked to allow more than the owner did).
 */
export async function loadPermissionGate(
  storage: StackStorage,
  emit: (event: StackEventBody) => void,
  newId: (prefix: string) => string,
  kiosk: () => boolean = () => false,
): Promise<PermissionGate> {
  const stored = await storage.readJson<RulesFile>(FILE);
  const own: PermissionRule[] = (stored?.version === 1 ? stored.rules : []).filter((rule) => ruleSchema.safeParse(rule).success && rule.source !== 'default');
  const waiting = new Map<string, (allow: boolean) => void>();
  const allowedHosts = new Set<string>();
  /** MCP tools the user allowed once: not asked again while the stack is open. */
  const allowedTools = new Set<string>();
  const all = () => [...DEFAULT_RULES, ...own];
  const save = () => storage.writeJson(FILE, { version: 1, rules: own } satisfies RulesFile);

  return {
    rules: all,
    async addRule(input, source) {
      const rule = ruleSchema.parse({ ...input, id: newId(source === 'agent' ? 'agent-rule' : 'user-rule'), source });
      const problem = rule.match.type === 'command' ? commandPatternProblem(rule.match.pattern) : null;
      if (problem) throw new PermissionError(problem);
      own.push(rule);
      await save();
      emit({ type: 'permission_rules_changed', rules: all() });
      return rule;
    },
    async removeRule(ruleId) {
      const at = own.findIndex((rule) => rule.id === ruleId);
      if (at < 0) {
        throw new PermissionError(DEFAULT_RULES.some((rule) => rule.id === ruleId) ? 'Default rules cannot be removed.' : `No rule ${ruleId}.`);
      }
      own.splice(at, 1);
      await save();
      emit({ type: 'permission_rules_changed', rules: all() });
    },
    async check(call, signal, userHosts = new Set()) {
      const verdict = evaluate(all(), { tool: call.tool, input: call.input }, { userHosts: new Set([...userHosts, ...allowedHosts]) });
      const base = { mission_id: call.mission_id, tool: call.tool, title: call.title };
      if (verdict.decision === 'allow') {
        emit({ type: 'permission_decision', ...base, decision: 'allowed' });
        return { allow: true };
      }
      const { rule } = verdict;
      if (verdict.decision === 'ask' && rule.id === MCP_RULE_ID && allowedTools.has(call.tool)) {
        emit({ type: 'permission_decision', ...base, decision: 'allowed', rule_id: rule.id, reason: 'The user allowed this tool earlier.' });
        return { allow: true };
      }
      if (verdict.decision === 'deny') {
        emit({ type: 'permission_decision', ...base, decision: 'denied', rule_id: rule.id, reason: rule.reason });
        return { allow: false, reason: `Blocked by the permission rule "${rule.id}": ${rule.reason}` };
      }
      if (kiosk()) {
        const reason = `This is a kiosk: only what its owner allowed runs here, and this needs asking (${rule.reason}).`;
        emit({ type: 'permission_decision', ...base, decision: 'denied', rule_id: rule.id, reason });
        return { allow: false, reason: `Not allowed on this kiosk. ${reason} Tell the visitor it cannot be done here.` };
      }
      const askId = newId('ask');
      emit({ type: 'permission_requested', ask_id: askId, ...base, rule_id: rule.id, reason: rule.reason });
      const allow = await new Promise<boolean>((resolve) => {
        const onAbort = () => settle(false);
        const settle = (value: boolean) => {
          waiting.delete(askId);
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        };
        waiting.set(askId, settle);
        if (signal.aborted) settle(false);
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      emit({ type: 'permission_decision', ...base, decision: allow ? 'allowed' : 'denied', rule_id: rule.id, reason: allow ? 'The user allowed it.' : 'The user said no.' });
      if (allow && rule.id === MCP_RULE_ID) allowedTools.add(call.tool);
      const url = (call.input as { url?: unknown } | null)?.url;
      if (allow && rule.match.type === 'address_not_from_user' && typeof url === 'string') {
        const host = hostOf(url);
        if (host) allowedHosts.add(host);
      }
      return allow ? { allow: true } : { allow: false, reason: `The user declined: ${rule.reason}` };
    },
    answer(askId, allow) {
      const settle = waiting.get(askId);
      if (!settle) return false;
      settle(allow);
      return true;
    },
  };
}
