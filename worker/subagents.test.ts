import { describe, expect, it } from 'vitest';
import type { AgentTool, ModelRequest, StreamFn } from './agent/types.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { SubagentInfo } from '../protocol/missions.ts';
import { createSubagents, READ_ONLY_TOOLS, type SubagentScope } from './subagents.ts';
import { modelMessage } from './test-stack.ts';

/** A tool that records when each call ran, so a test can tell calls that overlapped. */
function probeTool(name: string, spans: { input: string; start: number; end: number }[], ms = 60): AgentTool {
  return {
    spec: { name, description: name, input_schema: { type: 'object', properties: { label: { type: 'string' } } } },
    title: (input) => `Probing ${(input as { label: string }).label}`,
    async execute(input) {
      const start = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ms));
      spans.push({ input: (input as { label: string }).label, start, end: performance.now() });
      return { content: `probed ${(input as { label: string }).label}` };
    },
  };
}

const promptOf = (request: ModelRequest) => String(request.messages[0]!.content);

/** Each subagent calls `tool` once with its prompt as the label, then answers "<prompt> done". */
const oneToolThenAnswer = (tool: string): StreamFn =>
  async function* (request) {
    const label = promptOf(request);
    if (request.messages.length === 1) yield modelMessage([{ type: 'tool_use', id: `tu_${label}`, name: tool, input: { label } }]);
    else yield modelMessage([{ type: 'text', text: `${label} done` }]);
  };

function harness(stream: StreamFn, tools: AgentTool[], maxRunning?: number) {
  const events: StackEventBody[] = [];
  let n = 0;
  const subagents = createSubagents({
    emit: (event) => events.push(event),
    newId: (prefix) => `${prefix}_${++n}`,
    tools,
    stream: async () => stream,
    model: () => 'claude-sonnet-5-5',
    ...(maxRunning ? { maxRunning } : {}),
  });
  const controller = new AbortController();
  const spent: number[] = [];
  const scope: SubagentScope = { missionId: 'm_1', signal: controller.signal, attachments: '', spent: (usage) => spent.push(usage.input_tokens + usage.output_tokens) };
  const latest = () => {
    const byId = new Map<string, SubagentInfo>();
    for (const event of events) if (event.type === 'subagent_changed') byId.set(event.subagent.id, event.subagent);
    return [...byId.values()];
  };
  return { subagents, events, scope, controller, spent, latest };
}

describe('subagents', () => {
  it('runs two at once, each with its own context, and hands each answer back with its spend', async () => {
    const spans: { input: string; start: number; end: number }[] = [];
    const requests: ModelRequest[] = [];
    const stream: StreamFn = (request, signal) => {
      requests.push(structuredClone(request));
      return oneToolThenAnswer('read')(request, signal);
    };
    // `read` stands in for a slow tool: the two subagents' calls must overlap in time.
    const { subagents, scope, spent, latest, events } = harness(stream, [probeTool('read', spans, 150)]);
    const answers = await Promise.all([
      subagents.run({ description: 'First', prompt: 'alpha' }, scope, 'tu_a'),
      subagents.run({ description: 'Second', prompt: 'beta' }, scope, 'tu_b'),
    ]);
    expect(spans).toHaveLength(2);
    const [a, b] = spans;
    expect(a!.start < b!.end && b!.start < a!.end).toBe(true);
    expect(answers[0]!.content).toContain('alpha done');
    expect(answers[1]!.content).toContain('beta done');
    expect(answers[0]!.content).toMatch(/It made 1 tool call and used 14 tokens\./);
    // Each starts with its prompt alone, and the subagent's prompt, not the conversation's.
    const alpha = requests.filter((r) => promptOf(r) === 'alpha');
    expect(alpha[0]!.messages).toEqual([{ role: 'user', content: 'alpha' }]);
    expect(alpha[0]!.system.stable).toContain('You are a subagent');
    expect(spent).toEqual([7, 7, 7, 7]);
    expect(latest().map((s) => [s.description, s.status, s.tool_calls, s.usage.input_tokens + s.usage.output_tokens])).toEqual([
      ['First', 'completed', 1, 14],
      ['Second', 'completed', 1, 14],
    ]);
    expect(latest()[0]!.usage.cost_usd).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'subagent_step').map((e) => e.type === 'subagent_step' && e.step)).toContainEqual({ kind: 'tool', tool_use_id: 'tu_alpha', name: 'read', title: 'Probing alpha', status: 'ok', summary: 'probed alpha' });
    expect(events[0]).toMatchObject({ type: 'subagent_changed', subagent: { status: 'waiting', mission_id: 'm_1', tool_use_id: 'tu_a' } });
  });

  it('gives the read-only tools when none are named, and only those asked for otherwise', async () => {
    const seen: string[][] = [];
    const stream: StreamFn = async function* (request) {
      seen.push(request.tools.map((t) => t.name));
      yield modelMessage([{ type: 'text', text: 'ok' }]);
    };
    const names = ['read', 'glob', 'grep', 'search_memory', 'read_ocr', 'load_skill', 'bash', 'write', 'add_permission_rule', 'schedule_task'];
    const tools = names.map((name) => probeTool(name, []));
    const { subagents, scope } = harness(stream, tools);
    await subagents.run({ description: 'Look', prompt: 'look' }, scope, 't1');
    await subagents.run({ description: 'Change', prompt: 'change', tools: ['read', 'bash', 'write'] }, scope, 't2');
    expect(seen).toEqual([[...READ_ONLY_TOOLS], ['read', 'bash', 'write']]);
  });

  it('runs at most three at once; the others wait for a place', async () => {
    let running = 0;
    let most = 0;
    const stream: StreamFn = async function* () {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 40));
      running--;
      yield modelMessage([{ type: 'text', text: 'done' }]);
    };
    const { subagents, scope, events } = harness(stream, []);
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => subagents.run({ description: `Part ${i}`, prompt: `part ${i}` }, scope, `t${i}`)));
    expect(results.every((r) => !r.is_error)).toBe(true);
    expect(most).toBe(3);
    // The fourth waited: running only after one of the first three was done.
    const statuses = events.flatMap((e) => (e.type === 'subagent_changed' ? [`${e.subagent.description}:${e.subagent.status}`] : []));
    expect(statuses.indexOf('Part 4:running')).toBeGreaterThan(statuses.findIndex((s) => s.endsWith(':completed')));
    expect(subagents.active).toBe(0);
  });

  it('a cancel by the user stops one and tells its mission; the others go on', async () => {
    const stream: StreamFn = async function* (request, signal) {
      if (promptOf(request) === 'slow') {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw new Error('aborted');
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
      yield modelMessage([{ type: 'text', text: 'quick answer' }]);
    };
    const { subagents, scope, latest } = harness(stream, []);
    const slow = subagents.run({ description: 'Slow part', prompt: 'slow' }, scope, 't1');
    const quick = subagents.run({ description: 'Quick part', prompt: 'quick' }, scope, 't2');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const id = latest().find((s) => s.description === 'Slow part')!.id;
    expect(subagents.cancel(id)).toBe(true);
    const result = await slow;
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/^The user cancelled the subagent "Slow part" before it finished/);
    expect((await quick).content).toContain('quick answer');
    expect(latest().map((s) => [s.description, s.status, s.error])).toEqual([
      ['Slow part', 'cancelled', 'Cancelled by the user.'],
      ['Quick part', 'completed', null],
    ]);
    expect(subagents.cancel(id)).toBe(false);
  });

  it('the mission stopping stops its subagents, those waiting for a place too', async () => {
    const stream: StreamFn = async function* (_request, signal) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      throw new Error('aborted');
    };
    const { subagents, scope, controller, latest } = harness(stream, [], 1);
    const runs = [subagents.run({ description: 'A', prompt: 'a' }, scope, 't1'), subagents.run({ description: 'B', prompt: 'b' }, scope, 't2')];
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(latest().map((s) => s.status)).toEqual(['running', 'waiting']);
    controller.abort();
    const results = await Promise.all(runs);
    expect(results.map((r) => r.content)).toEqual(['The subagent "A" did not finish: the mission stopped.', 'The subagent "B" did not finish: the mission stopped.']);
    expect(latest().map((s) => s.status)).toEqual(['cancelled', 'cancelled']);
    expect(subagents.active).toBe(0);
  });

  it('a model failure fails the subagent alone, saying why', async () => {
    const stream: StreamFn = async function* () {
      yield* [];
      throw Object.assign(new Error('The model refused the request (HTTP 400).'), { retryable: false });
    };
    const { subagents, scope, latest } = harness(stream, []);
    const result = await subagents.run({ description: 'Doomed', prompt: 'x' }, scope, 't1');
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/^The subagent "Doomed" failed after 0 tool calls: /);
    expect(latest()[0]).toMatchObject({ status: 'failed', activity: 'Failed' });
  });
});
