import { describe, expect, it } from 'vitest';
import type { StackEventBody } from '../../protocol/events.ts';
import { createMemoryStorage } from '../../storage/json-files.ts';
import { loadPermissionGate } from './gate.ts';
import { evaluate, DEFAULT_RULES, MCP_RULE_ID } from './rules.ts';

describe('MCP tools and the permission gate', () => {
  it('every MCP tool asks by default; other tools are not caught by the mcp__* rule', () => {
    expect(evaluate(DEFAULT_RULES, { tool: 'mcp__crm__find', input: {} })).toMatchObject({ decision: 'ask', rule: { id: MCP_RULE_ID } });
    expect(evaluate(DEFAULT_RULES, { tool: 'read', input: { path: 'a.txt' } })).toEqual({ decision: 'allow' });
  });

  it("asks the first time for each tool; a yes holds for that tool while the stack is open, a no does not", async () => {
    const events: StackEventBody[] = [];
    let n = 0;
    const gate = await loadPermissionGate(createMemoryStorage(), (event) => events.push(event), (prefix) => `${prefix}-${++n}`);
    const signal = new AbortController().signal;
    const call = (tool: string) => ({ mission_id: 'm1', tool, title: tool, input: {} });
    const asked = () => events.filter((event) => event.type === 'permission_requested').length;
    const answerNext = (allow: boolean) =>
      setTimeout(() => {
        const ask = events.findLast((event) => event.type === 'permission_requested');
        if (ask?.type === 'permission_requested') gate.answer(ask.ask_id, allow);
      }, 0);

    answerNext(false);
    expect(await gate.check(call('mcp__crm__find'), signal)).toMatchObject({ allow: false });
    answerNext(true);
    expect(await gate.check(call('mcp__crm__find'), signal)).toEqual({ allow: true });
    expect(asked()).toBe(2);
    expect(await gate.check(call('mcp__crm__find'), signal)).toEqual({ allow: true });
    expect(asked()).toBe(2);
    // Another tool of the same server is its own question.
    answerNext(true);
    expect(await gate.check(call('mcp__crm__delete'), signal)).toEqual({ allow: true });
    expect(asked()).toBe(3);
    // A user's deny rule still wins over a yes given before.
    await gate.addRule({ effect: 'deny', tools: ['mcp__crm__*'], match: { type: 'always' }, reason: 'not the CRM today' }, 'user');
    expect(await gate.check(call('mcp__crm__find'), signal)).toMatchObject({ allow: false, reason: expect.stringContaining('not the CRM today') });
  });
});

describe('stored rules', () => {
  it('a rule a stack brought, with a pattern no rule may use, refuses every command and says why', async () => {
    const storage = createMemoryStorage();
    const rule = { id: 'user-rule-9', source: 'user', effect: 'deny', tools: ['bash'], match: { type: 'command', pattern: '(a)\\1' }, reason: 'No double a.' };
    await storage.writeJson('permissions.json', { version: 1, rules: [rule] });
    const gate = await loadPermissionGate(storage, () => {}, (prefix) => prefix);
    expect(gate.rules().map((r) => r.id)).toContain('user-rule-9');
    const verdict = await gate.check({ mission_id: 'm', tool: 'bash', title: 'ls', input: { command: 'ls' } }, new AbortController().signal);
    expect(verdict).toMatchObject({ allow: false, reason: expect.stringContaining('No double a. (A rule\'s command pattern cannot use a backreference ("\\1")') });
    expect(verdict.allow === false && verdict.reason).toContain('Change or remove this rule in Settings → Permissions.');
  });
});
