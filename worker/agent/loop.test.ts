import { describe, expect, it } from 'vitest';
import { ModelError } from './errors.ts';
import { runAgentLoop, type LoopOptions } from './loop.ts';
import type { AgentTool, LoopEvent, Message, ModelRequest, ModelStreamEvent, StreamFn } from './types.ts';

type Step = { text?: string[]; message?: Partial<Message> & { content: Message['content'] } } | { error: ModelError | Error };

/** A stream function that plays scripted steps and records what it was asked. */
function scriptedStream(steps: Step[]): StreamFn & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  const fn = async function* (request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent> {
    requests.push(structuredClone(request));
    const step = steps.shift();
    if (!step) throw new Error('script exhausted');
    if ('error' in step) throw step.error;
    for (const text of step.text ?? []) {
      if (signal.aborted) throw new Error('aborted');
      yield { type: 'text_delta', text };
    }
    const content = step.message?.content ?? [{ type: 'text', text: (step.text ?? []).join(''), citations: null }];
    yield {
      type: 'message',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: request.model,
        content,
        stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
        ...step.message,
      } as Message,
    };
  };
  return Object.assign(fn, { requests });
}

const echoTool: AgentTool = {
  spec: { name: 'echo', description: 'Echo', input_schema: { type: 'object', properties: { say: { type: 'string' } } } },
  title: (input) => `Echoing ${(input as { say: string }).say}`,
  execute: async (input) => ({ content: `echo: ${(input as { say: string }).say}` }),
};

function run(stream: StreamFn, extra: Partial<LoopOptions> = {}) {
  const events: LoopEvent[] = [];
  const controller = new AbortController();
  const promise = runAgentLoop({
    stream,
    tools: [echoTool],
    model: 'test-model',
    system: () => ({ stable: 'sys', dynamic: '' }),
    messages: [{ role: 'user', content: 'hi' }],
    signal: controller.signal,
    onEvent: (event) => events.push(event),
    sleep: async () => {},
    ...extra,
  });
  return { events, controller, promise };
}

const toolUse = (id: string, say: string) => ({ type: 'tool_use' as const, id, name: 'echo', input: { say }, caller: undefined as never });

describe('runAgentLoop', () => {
  it('streams text and completes', async () => {
    const { events, promise } = run(scriptedStream([{ text: ['Hel', 'lo'] }]));
    const outcome = await promise;
    expect(outcome.status).toBe('completed');
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text)).toEqual(['Hel', 'lo']);
    expect(outcome.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, cost_usd: null });
    expect(outcome.messages.at(-1)).toMatchObject({ role: 'assistant' });
  });

  it('runs parallel tool calls and returns results in order as data', async () => {
    const stream = scriptedStream([
      { message: { content: [toolUse('t1', 'a'), toolUse('t2', 'b')] } },
      { text: ['done'] },
    ]);
    const { events, promise } = run(stream);
    const outcome = await promise;
    expect(outcome.status).toBe('completed');
    expect(stream.requests[1]!.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'echo: a' },
        { type: 'tool_result', tool_use_id: 't2', content: 'echo: b' },
      ],
    });
    expect(events.filter((e) => e.type === 'tool_started').map((e) => (e as { title: string }).title)).toEqual(['Echoing a', 'Echoing b']);
  });

  it('gives the model an error result for an unknown tool or a throwing tool', async () => {
    const throwing: AgentTool = { ...echoTool, spec: { ...echoTool.spec, name: 'boom' }, execute: async () => { throw new Error('kaput'); } };
    const stream = scriptedStream([
      { message: { content: [{ ...toolUse('t1', 'x'), name: 'nope' }, { ...toolUse('t2', 'y'), name: 'boom' }] } },
      { text: ['ok'] },
    ]);
    const outcome = await run(stream, { tools: [echoTool, throwing] }).promise;
    expect(outcome.status).toBe('completed');
    const results = stream.requests[1]!.messages.at(-1)!.content as Array<{ content: string; is_error?: boolean }>;
    expect(results[0]).toMatchObject({ is_error: true, content: 'Unknown tool "nope". Available tools: echo, boom.' });
    expect(results[1]).toMatchObject({ is_error: true, content: 'Tool failed: kaput' });
  });

  it('retries a retryable error with the server delay, then succeeds', async () => {
    const delays: number[] = [];
    const stream = scriptedStream([
      { error: new ModelError({ code: 'model_rate_limited', message: 'slow down', retryable: true }, 1500) },
      { text: ['fine'] },
    ]);
    const { events, promise } = run(stream, { sleep: async (ms) => void delays.push(ms) });
    const outcome = await promise;
    expect(outcome.status).toBe('completed');
    expect(delays).toEqual([1500]);
    expect(events.find((e) => e.type === 'retry')).toEqual({ type: 'retry', attempt: 1, delay_ms: 1500, reason: 'slow down' });
  });

  it('gives up after maxRetries with the last error', async () => {
    const err = () => ({ error: new ModelError({ code: 'model_error', message: 'boom 500', retryable: true }) });
    const stream = scriptedStream([err(), err(), err(), { text: ['never'] }]);
    const outcome = await run(stream, { maxRetries: 2 }).promise;
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'model_error', message: 'boom 500' } });
    expect(stream.requests).toHaveLength(3);
  });

  it('does not retry an error that is not retryable', async () => {
    const stream = scriptedStream([{ error: new ModelError({ code: 'model_not_configured', message: 'no key' }) }, { text: ['x'] }]);
    const outcome = await run(stream).promise;
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'model_not_configured' } });
    expect(stream.requests).toHaveLength(1);
  });

  it('does not retry once text was shown', async () => {
    let calls = 0;
    const stream: StreamFn = async function* () {
      calls++;
      yield { type: 'text_delta', text: 'partial' };
      throw new ModelError({ code: 'model_stream_broken', message: 'cut off', retryable: true });
    };
    const outcome = await run(stream).promise;
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'model_stream_broken' } });
    expect(calls).toBe(1);
  });

  it('ends as aborted when the signal fires mid-stream', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stream: StreamFn = async function* (_request, signal) {
      yield { type: 'text_delta', text: 'a' };
      await gate;
      if (signal.aborted) throw new Error('aborted by signal');
      yield { type: 'text_delta', text: 'b' };
    };
    const { controller, promise } = run(stream);
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort();
    release();
    expect((await promise).status).toBe('aborted');
  });

  it('stops at the turn limit', async () => {
    const steps = Array.from({ length: 5 }, (_, i) => ({ message: { content: [toolUse(`t${i}`, 'again')] } }));
    const outcome = await run(scriptedStream(steps), { maxTurns: 3 }).promise;
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'turn_limit' } });
  });

  it('survives a listener that throws', async () => {
    const outcome = await run(scriptedStream([{ text: ['x'] }]), { onEvent: () => { throw new Error('bad listener'); } }).promise;
    expect(outcome.status).toBe('completed');
  });

  it('gives the model the refusal when a permission check says no', async () => {
    const stream = scriptedStream([{ message: { content: [toolUse('t1', 'secret')] } }, { text: ['ok'] }]);
    let ran = false;
    const tool: AgentTool = { ...echoTool, execute: async () => { ran = true; return { content: 'ran' }; } };
    const outcome = await run(stream, { tools: [tool], authorize: async () => ({ allow: false, reason: 'Blocked by rule x.' }) }).promise;
    expect(outcome.status).toBe('completed');
    expect(ran).toBe(false);
    expect(stream.requests[1]!.messages.at(-1)!.content).toEqual([{ type: 'tool_result', tool_use_id: 't1', content: 'Not run. Blocked by rule x.', is_error: true }]);
  });
});
