import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryHooks, type HookError } from './hooks.ts';
import type { BatchOutcome, FlushOutcome, ObservationProcessor } from './processor.ts';
import { openTestMemory, type TestMemory } from './test-helpers.ts';
import { OBSERVATION_LIMITS } from './truncate.ts';
import { TurnBuffer } from './turn-buffer.ts';

let opened: TestMemory | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

function fakeProcessor(): ObservationProcessor & { batches: number; flushes: number } {
  const processor = {
    batches: 0,
    flushes: 0,
    async processBatch(): Promise<BatchOutcome> {
      processor.batches++;
      return { status: 'empty' };
    },
    async flushAll(): Promise<FlushOutcome> {
      processor.flushes++;
      return { status: 'done', batches: [], remaining: 0 };
    },
  };
  return processor;
}

async function setup(options: { batchEvery?: number } = {}) {
  const m = (opened = await openTestMemory());
  await m.transcript.startSession('s1');
  const processor = fakeProcessor();
  const errors: HookError[] = [];
  const buffer = new TurnBuffer();
  const hooks = createMemoryHooks({ transcript: m.transcript, processor, sessionId: 's1', buffer, onError: (e) => errors.push(e), ...options });
  return { m, processor, hooks, errors, buffer };
}

describe('TurnBuffer', () => {
  it('buffers the user message, tool summaries and the agent response, then clears on take', () => {
    const buffer = new TurnBuffer();
    expect(buffer.take()).toBeUndefined();
    buffer.setUserMessage('extract vendors');
    buffer.addToolCall({ name: 'bash', input: { cmd: 'ls documents' }, output: 'a.pdf\nb.pdf', ok: true });
    buffer.appendAgentText('Found ');
    buffer.appendAgentText('two invoices.');
    expect(buffer.take()).toEqual({
      userMessage: 'extract vendors',
      toolCalls: [{ name: 'bash', ok: true, summary: 'bash({"cmd":"ls documents"}) -> a.pdf\nb.pdf' }],
      agentResponse: 'Found two invoices.',
    });
    expect(buffer.isEmpty).toBe(true);
    buffer.setAgentResponse('replaced');
    buffer.setAgentResponse('final');
    expect(buffer.take()!.agentResponse).toBe('final');
  });

  it('truncates each tool summary to 2000 characters and survives odd input', () => {
    const buffer = new TurnBuffer();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    buffer.addToolCall({ name: 'read', input: 'x'.repeat(5_000), output: 'y'.repeat(10_000), ok: true });
    buffer.addToolCall({ name: 'weird', input: circular, ok: false });
    const [first, second] = buffer.take()!.toolCalls;
    expect(first!.summary.length).toBeLessThanOrEqual(OBSERVATION_LIMITS.toolSummary);
    expect(first!.summary).toMatch(/truncated: /);
    expect(second).toEqual({ name: 'weird', ok: false, summary: 'weird([object Object])' });
  });

  it('bounds a huge streamed answer and reports its real length', () => {
    const buffer = new TurnBuffer();
    for (let i = 0; i < 1_000; i++) buffer.appendAgentText('z'.repeat(1_000));
    const { agentResponse } = buffer.take()!;
    expect(agentResponse.length).toBeLessThanOrEqual(OBSERVATION_LIMITS.agentResponse);
    expect(agentResponse).toMatch(/truncated: 1,000,000 characters in all/);
  });
});

describe('memory hooks', () => {
  it('userPromptSubmit buffers the message; postToolUse buffers without writing', async () => {
    const { m, hooks, buffer } = await setup();
    expect(await hooks.userPromptSubmit('hello')).toEqual({ ok: true });
    expect(hooks.postToolUse({ name: 'bash', input: { cmd: 'ls' }, output: 'a', ok: true })).toEqual({ ok: true });
    expect(hooks.agentText('hi')).toEqual({ ok: true });
    expect(buffer.isEmpty).toBe(false);
    expect(await m.transcript.countUnprocessed()).toBe(0);
  });

  it('stop writes one observation with everything buffered, then clears the buffer', async () => {
    const { m, hooks, buffer } = await setup();
    await hooks.userPromptSubmit('extract vendors');
    hooks.postToolUse({ name: 'read', input: { path: 'documents/a.pdf' }, output: 'ACME', ok: true });
    hooks.postToolUse({ name: 'bash', input: { cmd: 'false' }, output: 'exit 1', ok: false });
    hooks.setAgentResponse('The vendor is ACME.');
    const result = await hooks.stop();
    expect(result).toEqual({ ok: true, observationId: 1 });
    expect(buffer.isEmpty).toBe(true);
    const [obs] = await m.transcript.unprocessed();
    expect(obs).toMatchObject({
      sessionId: 's1',
      sequenceNum: 1,
      userMessage: 'extract vendors',
      agentResponse: 'The vendor is ACME.',
      toolCalls: [
        { name: 'read', ok: true, summary: 'read({"path":"documents/a.pdf"}) -> ACME' },
        { name: 'bash', ok: false, summary: 'bash({"cmd":"false"}) -> exit 1' },
      ],
    });
    expect(await hooks.stop()).toEqual({ ok: true }); // nothing buffered: nothing written
    expect(await m.transcript.countUnprocessed()).toBe(1);
  });

  it('counts turns and starts a batch at the threshold (25 by default)', async () => {
    const { hooks, processor } = await setup();
    for (let turn = 1; turn <= 24; turn++) {
      await hooks.userPromptSubmit(`turn ${turn}`);
      const result = await hooks.stop();
      expect(result.batch).toBeUndefined();
      expect(hooks.turnCount).toBe(turn);
    }
    await hooks.userPromptSubmit('turn 25');
    const result = await hooks.stop();
    expect(await result.batch).toEqual({ status: 'empty' });
    expect(processor.batches).toBe(1);
    expect(hooks.turnCount).toBe(0);
    await hooks.idle();
  });

  it('counts turns left from earlier sessions towards the next batch', async () => {
    const m = (opened = await openTestMemory());
    await m.transcript.startSession('s1');
    const processor = fakeProcessor();
    const hooks = createMemoryHooks({ transcript: m.transcript, processor, sessionId: 's1', initialTurnCount: 24 });
    await hooks.userPromptSubmit('one more');
    expect((await hooks.stop()).batch).toBeDefined();
  });

  it('preCompact flushes on trigger "auto" only', async () => {
    const { hooks, processor } = await setup();
    expect(await hooks.preCompact('manual')).toEqual({ ok: true });
    expect(processor.flushes).toBe(0);
    expect(await hooks.preCompact('auto')).toEqual({ ok: true, flush: { status: 'done', batches: [], remaining: 0 } });
    expect(processor.flushes).toBe(1);
  });

  it('sessionEnd writes an unfinished turn, flushes and closes the session record', async () => {
    const { m, hooks, processor } = await setup();
    await hooks.userPromptSubmit('stopped halfway');
    expect((await hooks.sessionEnd()).ok).toBe(true);
    expect(processor.flushes).toBe(1);
    expect((await m.transcript.unprocessed()).map((o) => o.userMessage)).toEqual(['stopped halfway']);
    expect((await m.transcript.getSession('s1'))!.endedAt).not.toBeNull();
  });

  it('writes a turn left unfinished before starting the next one', async () => {
    const { m, hooks } = await setup();
    await hooks.userPromptSubmit('first');
    hooks.agentText('partial');
    await hooks.userPromptSubmit('second');
    await hooks.stop();
    expect((await m.transcript.unprocessed()).map((o) => [o.userMessage, o.agentResponse])).toEqual([
      ['first', 'partial'],
      ['second', ''],
    ]);
  });

  it('never throws: storage and processor failures come back as results and reach onError', async () => {
    const m = (opened = await openTestMemory());
    const errors: HookError[] = [];
    const processor: ObservationProcessor = {
      processBatch: () => Promise.reject(new Error('processor exploded')),
      flushAll: () => Promise.reject(new Error('flush exploded')),
    };
    const hooks = createMemoryHooks({
      transcript: m.transcript, // session "nobody" was never started: writes fail on the foreign key
      processor,
      sessionId: 'nobody',
      batchEvery: 1,
      onError: (error) => {
        errors.push(error);
        throw new Error('listener also broken');
      },
    });
    await hooks.userPromptSubmit('x');
    const stopped = await hooks.stop();
    expect(stopped).toMatchObject({ ok: false, error: { hook: 'stop', code: 'db_constraint' } });
    expect(await hooks.preCompact('auto')).toMatchObject({ ok: false, error: { hook: 'preCompact', message: 'flush exploded' } });
    expect(await hooks.sessionEnd()).toMatchObject({ ok: false, error: { hook: 'sessionEnd' } });
    expect(errors.map((e) => e.hook)).toEqual(['stop', 'preCompact', 'sessionEnd']);

    // A batch that rejects is reported, not raised.
    await m.transcript.startSession('s2');
    const second = createMemoryHooks({ transcript: m.transcript, processor, sessionId: 's2', batchEvery: 1, onError: (e) => errors.push(e) });
    await second.userPromptSubmit('y');
    const result = await second.stop();
    expect(await result.batch).toMatchObject({ status: 'failed', message: 'processor exploded' });
    await second.idle();
    expect(errors.at(-1)).toMatchObject({ hook: 'batch' });
  });

  it('reports a failed batch outcome to onError', async () => {
    const m = (opened = await openTestMemory());
    await m.transcript.startSession('s1');
    const onError = vi.fn();
    const processor: ObservationProcessor = {
      processBatch: async () => ({ status: 'failed', failure: 'model_error', message: 'offline', observations: 1, attempt: 2 }),
      flushAll: async () => ({ status: 'failed', batches: [{ status: 'failed', failure: 'model_error', message: 'offline', observations: 1, attempt: 3 }], remaining: 1 }),
    };
    const hooks = createMemoryHooks({ transcript: m.transcript, processor, sessionId: 's1', batchEvery: 1, onError });
    await hooks.userPromptSubmit('x');
    await hooks.stop();
    await hooks.idle();
    expect(onError).toHaveBeenCalledWith({ hook: 'batch', code: 'internal', message: 'model_error: offline' });
    expect(await hooks.preCompact('auto')).toMatchObject({ ok: false, error: { message: 'model_error: offline' }, flush: { remaining: 1 } });
  });
});
