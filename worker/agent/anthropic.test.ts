// The Anthropic stream function against the scripted fake server, through the real SDK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModel, type FakeModel } from '../../tests/fake-model/server.ts';
import { createAnthropicStream } from './anthropic.ts';
import { ModelError } from './errors.ts';
import type { ModelRequest, ModelStreamEvent } from './types.ts';

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel({ port: 0 });
});
afterAll(() => fake.close());

const request: ModelRequest = { model: 'claude-test', system: { stable: 'sys', dynamic: 'canvas' }, messages: [{ role: 'user', content: 'hi' }], tools: [], max_tokens: 100 };

async function collect(signal = new AbortController().signal) {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of createAnthropicStream({ baseURL: fake.url })(request, signal)) events.push(event);
    return { events };
  } catch (error) {
    return { events, error: error as ModelError };
  }
}

describe('createAnthropicStream', () => {
  it('yields text deltas then the whole message, sending no key of its own', async () => {
    fake.load({
      name: 'text',
      turns: [{ expect: { headers: { authorization: null, 'x-api-key': null } }, reply: { content: [{ type: 'text', text: 'Hello there, friend' }], chunk_chars: 5 } }],
    });
    const { events, error } = await collect();
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text)).toEqual(['Hello', ' ther', 'e, fr', 'iend']);
    const last = events.at(-1);
    expect(last?.type === 'message' && last.message.content).toEqual([{ type: 'text', text: 'Hello there, friend' }]);
    expect(fake.state().failures).toEqual([]);
    // The stable prefix is marked for prompt caching; the dynamic part follows uncached.
    expect((fake.state().requests[0]!.body as { system: unknown }).system).toEqual([
      { type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'canvas' },
    ]);
  });

  it('parses tool_use input from partial JSON', async () => {
    fake.load({ name: 'tool', turns: [{ reply: { content: [{ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'T', content: 'x'.repeat(50) } }] } }] });
    const { events } = await collect();
    const last = events.at(-1);
    expect(last?.type === 'message' && last.message.stop_reason).toBe('tool_use');
    expect(last?.type === 'message' && last.message.content[0]).toMatchObject({ type: 'tool_use', name: 'create_window', input: { kind: 'notes', title: 'T' } });
  });

  it.each([
    [{ status: 429, headers: { 'retry-after': '2' } }, { code: 'model_rate_limited', retryable: true }, 2000],
    [{ status: 529 }, { code: 'model_overloaded', retryable: true }, undefined],
    [{ status: 500, message: 'upstream fell over' }, { code: 'model_error', retryable: true }, undefined],
    [{ status: 400, message: 'bad thing' }, { code: 'model_rejected' }, undefined],
    [{ status: 503, type: 'proxy_not_configured', message: 'This proxy has no Anthropic API key.' }, { code: 'model_not_configured', message: 'This proxy has no Anthropic API key.' }, undefined],
  ])('classifies HTTP error %j', async (error, shape, retryAfter) => {
    fake.load({ name: 'error', turns: [{ reply: { error } }] });
    const result = await collect();
    expect(result.error).toBeInstanceOf(ModelError);
    expect(result.error!.shape).toMatchObject(shape);
    expect(result.error!.retryAfterMs).toBe(retryAfter);
  });

  it('names a broken stream after some text', async () => {
    fake.load({ name: 'broken', turns: [{ reply: { content: [{ type: 'text', text: 'partial answer that breaks' }], chunk_chars: 4, break_after_events: 5 } }] });
    const { events, error } = await collect();
    expect(events.some((e) => e.type === 'text_delta')).toBe(true);
    expect(error!.shape).toMatchObject({ code: 'model_stream_broken' });
    expect(error!.message).toMatch(/^The model's reply was cut off/);
  });

  it('names an unreachable endpoint', async () => {
    const stream = createAnthropicStream({ baseURL: 'http://127.0.0.1:9' });
    await expect(async () => {
      for await (const _ of stream(request, new AbortController().signal)) void _;
    }).rejects.toMatchObject({ shape: { code: 'model_unreachable', retryable: true } });
  });

  it('stops when aborted mid-stream, and the server sees the abort', async () => {
    fake.load({ name: 'hang', turns: [{ reply: { content: [{ type: 'text', text: 'never finishes' }], hang_after_events: 4 } }] });
    const controller = new AbortController();
    const stream = createAnthropicStream({ baseURL: fake.url })(request, controller.signal);
    const seen: string[] = [];
    const done = (async () => {
      for await (const event of stream) {
        seen.push(event.type);
        controller.abort();
      }
    })();
    await expect(done).rejects.toMatchObject({ shape: { code: 'aborted' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.state().requests[0]?.aborted).toBe(true);
  });

  it('sends the user\'s own key in direct mode, with the browser-access header Anthropic requires', async () => {
    fake.load({
      name: 'direct',
      turns: [{ expect: { headers: { authorization: 'Bearer user-key-1', 'anthropic-dangerous-direct-browser-access': 'true' } }, reply: { content: [{ type: 'text', text: 'ok' }] } }],
    });
    for await (const _ of createAnthropicStream({ baseURL: fake.url, apiKey: 'user-key-1' })(request, new AbortController().signal)) void _;
    expect(fake.state().failures).toEqual([]);
  });
});
