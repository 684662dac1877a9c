// add_permission_rule: the agent may tighten its own permissions, never loosen them.
import { z } from 'zod';
import type { PermissionGate } from '../permissions/gate.ts';
import { ruleMatchSchema } from '../permissions/rules.ts';
import { defineTool } from './define-tool.ts';

export const addPermissionRuleSchema = z.object({
  effect: z.enum(['deny', 'ask']).describe('"deny" blocks matching calls; "ask" waits for the user.'),
  tools: z.array(z.string().min(1)).min(1).describe('Tool names the rule applies to, or ["*"].'),
  match: ruleMatchSchema.describe('What to match: always, path_prefix, command (regex), private_network, delete_many.'),
  reason: z.string().min(1).max(300).describe('Why, in words the user reads when it applies.'),
});

export function createAddPermissionRuleTool(gate: Pick<PermissionGate, 'addRule'>) {
  return defineTool({
    name: 'add_permission_rule',
    description:
      'Add a permission rule that blocks, or asks the user before, matching tool calls — e.g. when the user says "never delete files in documents/". Rules you add can only be removed by the user.',
    schema: addPermissionRuleSchema,
    title: (input) => `Adding a rule: ${input.reason}`,
    async run(input) {
      const rule = await gate.addRule(input, 'agent');
      return `Added rule ${rule.id} (${rule.effect} ${rule.tools.join(', ')}).`;
    },
  });
}
