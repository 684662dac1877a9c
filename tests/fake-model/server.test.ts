// The fake model driven by the real @anthropic-ai/sdk client: if the SDK parses it, the wire
// format is right. Each test loads its own script into one server started on a free port.
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeScript } from '../../worker/agent/scripted/script.ts';
import { type FakeModel, startFakeModel } from './server.ts';

let fake: FakeModel;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeModel({ port: 0 });
  client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.load({ name: 'empty', turns: [] }));

const params = {
  model: 'claude-fake-1',
  max_tokens: 100,
  messages: [{ role: 'user' as const, content: 'Make me a window' }],
};

function load(turns: FakeScript['turns']): void {
  fake.load({ name: 'test', turns });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected the promise to reject');
}

describe('successful replies through the SDK', () => {
  it('streams text deltas in order and assembles the scripted message', async () => {
    const text = 'Hello! Here is a reply long enough to take several deltas.';
    const usage = { input_tokens: 42, output_tokens: 17, cache_read_input_tokens: 5, cache_creation_input_tokens: 3 };
    load([{ reply: { content: [{ type: 'text', text }], usage, chunk_chars: 5 } }]);

    const stream = client.messages.stream(params);
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();

    expect(deltas).toHaveLength(Math.ceil(text.length / 5));
    expect(deltas.every((d) => d.length <= 5)).toBe(true);
    expect(deltas.join('')).toBe(text);
    expect(message.content).toEqual([{ type: 'text', text }]);
    expect(message.usage).toEqual(usage);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.stop_sequence).toBeNull();
    expect(message.model).toBe('claude-fake-1');
    expect(message.id).toBe('msg_fake_1');
  });

  it('streams tool input as partial_json chunks that parse to the scripted object', async () => {
    const input = { title: 'Invoices — März', size: { w: 640, h: 480 }, tags: ['a', 'b'], emoji: '📄' };
    load([{ reply: { content: [{ type: 'text', text: 'Opening it.' }, { type: 'tool_use', name: 'create_window', input }] } }]);

    const stream = client.messages.stream(params);
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const message = await stream.finalMessage();

    expect(partials.length).toBeGreaterThan(5);
    expect(JSON.parse(partials.join(''))).toEqual(input);
    expect(message.content[1]).toEqual({ type: 'tool_use', id: 'toolu_fake_0_1', name: 'create_window', input });
    expect(message.stop_reason).toBe('tool_use');
  });

  it('answers a non-streaming create with the assembled message', async () => {
    load([{ reply: { content: [{ type: 'tool_use', name: 'run', input: { cmd: 'ls' }, id: 'toolu_mine' }], stop_reason: 'max_tokens' } }]);

    const message = await client.messages.create(params);

    expect(message).toMatchObject({
      id: 'msg_fake_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-fake-1',
      content: [{ type: 'tool_use', id: 'toolu_mine', name: 'run', input: { cmd: 'ls' } }],
      stop_reason: 'max_tokens',
      stop_sequence: null,
    });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('gives repeated turns distinct tool ids and answers forever with repeat -1', async () => {
    load([{ reply: { content: [{ type: 'tool_use', name: 'tick', input: {} }] }, repeat: -1 }]);

    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(((await client.messages.create(params)).content[0] as { id: string }).id);

    expect(ids).toEqual(['toolu_fake_0_0', 'toolu_fake_0_0_1', 'toolu_fake_0_0_2']);
    expect(fake.state().remaining).toBeNull();
  });
});

describe('errors through the SDK', () => {
  it('429 with retry-after surfaces as RateLimitError carrying the headers', async () => {
    load([{ reply: { error: { status: 429, headers: { 'retry-after': '1' } } } }]);

    const error = await rejection(client.messages.create(params));

    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const rate = error as APIError<429, Headers>;
    expect(rate.status).toBe(429);
    expect(rate.type).toBe('rate_limit_error');
    expect(rate.headers.get('retry-after')).toBe('1');
    expect(rate.requestID).toBe('req_fake_1');
  });

  it('the SDK honours retry-after, retries, and gets the next scripted turn', async () => {
    load([
      { reply: { error: { status: 429, headers: { 'retry-after': '1' } } } },
      { reply: { content: [{ type: 'text', text: 'second time lucky' }] } },
    ]);
    const retrying = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 1 });

    const started = Date.now();
    const message = await retrying.messages.stream(params).finalMessage();

    expect(message.content).toEqual([{ type: 'text', text: 'second time lucky' }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.state()).toMatchObject({ failures: [], remaining: 0 });
    expect(fake.state().requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1']);
  });

  it('x-should-retry: false stops the SDK retrying a 500', async () => {
    load([{ reply: { error: { status: 500, headers: { 'x-should-retry': 'false' } } }, repeat: 3 }]);
    const retrying = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 2 });

    expect(await rejection(retrying.messages.create(params))).toBeInstanceOf(Anthropic.InternalServerError);
    expect(fake.state().requests).toHaveLength(1);
  });

  it('500 surfaces as InternalServerError with type api_error', async () => {
    load([{ reply: { error: { status: 500 } } }]);

    const error = await rejection(client.messages.stream(params).finalMessage());

    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(error).toMatchObject({ status: 500, type: 'api_error', apiMessage: 'Internal server error' });
  });

  it('529 surfaces as OverloadedError (an InternalServerError) with type overloaded_error', async () => {
    load([{ reply: { error: { status: 529, message: 'Overloaded' } } }]);

    const error = await rejection(client.messages.create(params));

    expect(error).toBeInstanceOf(Anthropic.OverloadedError);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(error).toMatchObject({ status: 529, type: 'overloaded_error', apiMessage: 'Overloaded' });
  });

  it('an overload mid-stream (event: error) rejects the stream with a status-less APIError', async () => {
    load([{ reply: { content: [{ type: 'text', text: 'partial answer here' }], stream_error: { after_events: 4 } } }]);

    const stream = client.messages.stream(params);
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const error = await rejection(stream.finalMessage());

    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error).not.toBeInstanceOf(Anthropic.InternalServerError);
    expect(error).toMatchObject({ status: undefined, type: 'overloaded_error', apiMessage: 'Overloaded' });
    expect(deltas).toEqual(['partial ']);
  });

  it('a broken stream rejects with AnthropicError "terminated" caused by the socket error', async () => {
    load([{ reply: { content: [{ type: 'text', text: 'this stream will break' }], break_after_events: 4 } }]);

    const stream = client.messages.stream(params);
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const error = await rejection(stream.finalMessage());

    // Not an APIConnectionError: the response had started, so the SDK wraps undici's error.
    expect(error).toBeInstanceOf(Anthropic.AnthropicError);
    expect(error).not.toBeInstanceOf(Anthropic.APIError);
    expect((error as Error).message).toBe('terminated');
    expect(((error as Error).cause as Error).message).toBe('terminated');
    expect(deltas).toEqual(['this str']);
    expect(fake.state().requests[0]?.aborted).toBe(false);
  });

  it('a broken non-streaming request surfaces as APIConnectionError', async () => {
    load([{ reply: { content: [{ type: 'text', text: 'never sent' }], break_after_events: 0 } }]);

    expect(await rejection(client.messages.create(params))).toBeInstanceOf(Anthropic.APIConnectionError);
  });

  it('a hanging stream ends with APIUserAbortError when the caller aborts, and the server sees it', async () => {
    load([{ reply: { content: [{ type: 'text', text: 'I will hang after this' }], hang_after_events: 4 } }]);
    const abort = new AbortController();

    const stream = client.messages.stream(params, { signal: abort.signal });
    stream.on('text', () => abort.abort());
    const error = await rejection(stream.finalMessage());

    expect(error).toBeInstanceOf(Anthropic.APIUserAbortError);
    await expect.poll(() => fake.state().requests[0]?.aborted).toBe(true);
  });
});

describe('expectations and exhaustion', () => {
  it('passes when the request matches, including the headers the SDK sends', async () => {
    load([
      {
        expect: {
          last_user_text: 'a window',
          system_contains: 'canvas',
          model: 'claude-fake-1',
          has_tools: ['create_window'],
          headers: { authorization: 'Bearer test-key', 'x-api-key': null },
        },
        reply: { content: [{ type: 'text', text: 'ok' }] },
      },
    ]);
    const tools = [{ name: 'create_window', input_schema: { type: 'object' as const } }];

    await client.messages.create({ ...params, system: 'You drive a canvas.', tools });

    expect(fake.state().failures).toEqual([]);
  });

  it('records a failed expectation and answers 400 with a precise message', async () => {
    load([
      { reply: { content: [{ type: 'tool_use', name: 'run', input: {} }] } },
      {
        expect: { tool_result: { tool_use_id: 'toolu_fake_0_0', is_error: true }, headers: { authorization: null } },
        reply: { content: [{ type: 'text', text: 'never' }] },
      },
    ]);
    await client.messages.create(params);
    const next = {
      ...params,
      messages: [
        ...params.messages,
        { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_fake_0_0', name: 'run', input: {} }] },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_fake_0_0', content: 'fine' }] },
      ],
    };

    const error = await rejection(client.messages.create(next));

    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as APIError).apiMessage).toMatch(/^fake model expectation failed: script "test" turn 1: tool_result: /);
    expect(fake.state().failures).toEqual([
      {
        request: 2,
        turn: 1,
        message:
          'script "test" turn 1: tool_result: expected a tool_result matching {"tool_use_id":"toolu_fake_0_0","is_error":true} ' +
          'in the last user message, got [{"tool_use_id":"toolu_fake_0_0","is_error":false,"content":"fine"}]',
      },
      { request: 2, turn: 1, message: 'script "test" turn 1: headers.authorization: expected the header to be absent, got "Bearer test-key"' },
    ]);
  });

  it('answers 500 and records a failure once the script is exhausted', async () => {
    load([{ reply: { content: [{ type: 'text', text: 'only one' }] } }]);
    await client.messages.create(params);

    const error = await rejection(client.messages.create(params));

    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as APIError).apiMessage).toMatch(/^fake model: script exhausted \(request 2\)/);
    expect(fake.state().failures).toMatchObject([{ request: 2, turn: null }]);
    expect(fake.state().remaining).toBe(0);
  });
});
