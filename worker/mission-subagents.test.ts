// A mission's subagents through the whole stack: the task tool, the task board, the user's cancel,
// and the token budget that counts the subagents' spend with the mission's.
import { describe, expect, it } from 'vitest';
import { openTestMemory } from '../memory/test-helpers.ts';
import type { ModelRequest, StreamFn } from './agent/types.ts';
import type { StackEvent } from '../protocol/events.ts';
import { createStack } from './stack.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { modelMessage, testStackDeps } from './test-stack.ts';

const healthy = (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch;

async function openStack(stream: StreamFn) {
  const storage = createMemoryStorage();
  const stack = await createStack(testStackDeps(await openTestMemory(), { storage, fetch: healthy, createStream: () => stream }));
  const events: StackEvent[] = [];
  await stack.subscribe(0, (batch) => events.push(...batch));
  return { stack, events, storage };
}

async function until(events: StackEvent[], found: (event: StackEvent) => boolean) {
  for (let i = 0; i < 400; i++) {
    if (events.some(found)) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`not seen; got ${events.map((e) => e.type).join(', ')}`);
}

const isSubagent = (request: ModelRequest) => request.system.stable.startsWith('You are a subagent');
const lastToolResults = (request: ModelRequest) => {
  const last = request.messages.at(-1)!;
  return Array.isArray(last.content) ? last.content.flatMap((block) => (block.type === 'tool_result' ? [String(block.content)] : [])) : [];
};

describe('a mission with subagents', () => {
  it('two task calls in one turn run together, the board opens, both answers return and their spend joins the mission', async () => {
    const parent: ModelRequest[] = [];
    let inFlight = 0;
    let most = 0;
    const stream: StreamFn = async function* (request) {
      if (isSubagent(request)) {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 50));
        inFlight--;
        yield modelMessage([{ type: 'text', text: `answer to ${String(request.messages[0]!.content)}` }]);
        return;
      }
      parent.push(structuredClone(request));
      if (parent.length === 1) {
        yield modelMessage([
          { type: 'tool_use', id: 'tu_1', name: 'task', input: { description: 'March invoices', prompt: 'total March' } },
          { type: 'tool_use', id: 'tu_2', name: 'task', input: { description: 'April invoices', prompt: 'total April' } },
        ]);
      } else {
        yield modelMessage([{ type: 'text', text: 'Both totals are in.' }]);
      }
    };
    const { stack, events } = await openStack(stream);
    await stack.request({ id: 'r1', method: 'mission', params: { text: 'total both months' } });
    await until(events, (e) => e.type === 'mission_finished');

    expect(most).toBe(2);
    expect(parent[0]!.tools.map((t) => t.name)).toContain('task');
    const results = lastToolResults(parent[1]!);
    expect(results[0]).toContain('answer to total March');
    expect(results[1]).toContain('answer to total April');
    expect(events.find((e) => e.type === 'window_opened')).toMatchObject({ window: { kind: 'board', title: 'Task board' } });
    const finished = events.filter((e) => e.type === 'subagent_changed' && e.subagent.status === 'completed');
    expect(finished.map((e) => e.type === 'subagent_changed' && [e.subagent.description, e.subagent.usage.input_tokens])).toEqual([
      ['March invoices', 3],
      ['April invoices', 3],
    ]);
    // The mission's usage: its own two calls and one call of each subagent.
    expect(events.find((e) => e.type === 'mission_finished')).toMatchObject({ status: 'completed', usage: { input_tokens: 12, output_tokens: 16 } });
    // The subagents' steps are not the mission's: the chat's tool events are the two task calls.
    expect(events.filter((e) => e.type === 'tool_started').map((e) => e.type === 'tool_started' && e.title)).toEqual(['Subagent: March invoices', 'Subagent: April invoices']);
  });

  it('the user cancels one subagent: the mission goes on and reads that it was cancelled', async () => {
    let parentCalls = 0;
    let told = '';
    const stream: StreamFn = async function* (request, signal) {
      if (isSubagent(request)) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw new Error('aborted');
      }
      parentCalls++;
      if (parentCalls === 1) yield modelMessage([{ type: 'tool_use', id: 'tu_1', name: 'task', input: { description: 'Endless', prompt: 'never ends' } }]);
      else {
        told = lastToolResults(request)[0]!;
        yield modelMessage([{ type: 'text', text: 'Understood.' }]);
      }
    };
    const { stack, events } = await openStack(stream);
    await stack.request({ id: 'r1', method: 'mission', params: { text: 'go' } });
    await until(events, (e) => e.type === 'subagent_changed' && e.subagent.status === 'running');
    const running = events.find((e) => e.type === 'subagent_changed')!;
    const id = running.type === 'subagent_changed' ? running.subagent.id : '';
    expect(await stack.request({ id: 'c', method: 'cancel_subagent', params: { subagent_id: id } })).toEqual({ request_id: 'c', ok: true, result: { cancelled: true } });
    await until(events, (e) => e.type === 'mission_finished');
    expect(told).toMatch(/The user cancelled the subagent "Endless"/);
    expect(events.find((e) => e.type === 'mission_finished')).toMatchObject({ status: 'completed' });
    expect(await stack.request({ id: 'd', method: 'cancel_subagent', params: { subagent_id: 'sub_nope' } })).toMatchObject({ ok: true, result: { cancelled: false } });
  });

  it('stops the mission at its token budget, its subagents counted, and says so', async () => {
    let subagentCalls = 0;
    const stream: StreamFn = async function* (request) {
      if (isSubagent(request)) {
        subagentCalls++;
        // Each call of a subagent spends 700 tokens and asks for another round.
        yield { type: 'message', message: { ...(modelMessage([{ type: 'tool_use', id: `s${subagentCalls}`, name: 'glob', input: { pattern: '*' } }]) as { message: object }).message, usage: { input_tokens: 600, output_tokens: 100 } } as never };
        return;
      }
      yield modelMessage([{ type: 'tool_use', id: 'tu_1', name: 'task', input: { description: 'Look around', prompt: 'look' } }]);
    };
    const { stack, events } = await openStack(stream);
    expect(await stack.request({ id: 's', method: 'update_settings', params: { mission_token_budget: 500 } })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    await stack.request({ id: 's', method: 'update_settings', params: { mission_token_budget: 2_000 } });
    await stack.request({ id: 'r1', method: 'mission', params: { text: 'look around' } });
    await until(events, (e) => e.type === 'mission_finished');
    const finished = events.find((e) => e.type === 'mission_finished');
    // 7 tokens of the mission's own call, then 700 a call of its subagent: the third reaches 2,000.
    expect(subagentCalls).toBe(3);
    expect(finished).toMatchObject({ status: 'failed', error: { code: 'budget' }, usage: { input_tokens: 1_803, output_tokens: 304 } });
    expect(finished?.type === 'mission_finished' && finished.error?.message).toBe(
      "Stopped at this mission's token budget: it used 2,107 tokens of the 2,000 allowed (its subagents included). What it did is above; raise the token budget per mission in Settings, or ask for a smaller step.",
    );
    const last = events.filter((e) => e.type === 'subagent_changed').at(-1);
    expect(last).toMatchObject({ subagent: { status: 'cancelled', error: 'Its mission stopped.' } });
    // No limit again: 0 removes it.
    const cleared = await stack.request({ id: 's2', method: 'update_settings', params: { mission_token_budget: 0 } });
    expect(cleared.ok && 'mission_token_budget' in cleared.result).toBe(false);
  });
});
