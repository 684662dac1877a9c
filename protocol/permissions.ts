// Permission rules: checked before every tool call, set by the user or kept from an answer.

export type RuleMatch =
  | { type: 'always' }
  | { type: 'path_prefix'; prefix: string }
  | { type: 'command'; pattern: string }
  | { type: 'private_network' }
  /** A web address whose host the user did not name (nor allow with a click) this conversation. */
  | { type: 'address_not_from_user' }
  | { type: 'delete_many'; threshold: number };

export interface PermissionRule {
  id: string;
  /** Defaults cannot be removed; the agent's rules only by the user. */
  source: 'default' | 'user' | 'agent';
  effect: 'deny' | 'ask';
  /** Tool names, or ["*"]. */
  tools: string[];
  match: RuleMatch;
  reason: string;
}

export type NewPermissionRule = Omit<PermissionRule, 'id' | 'source'>;
