// The OpenAI-compatible stream against a small local server speaking chat-completions SSE.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from './errors.ts';
import { createOpenAIStream, toChatMessages } from './openai.ts';
import type { ModelRequest, ModelStreamEvent } from './types.ts';

let server: Server;
let base = '';
let reply: (res: import('node:http').ServerResponse) => void = () => {};
const bodies: unknown[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      bodies.push({ url: req.url, auth: req.headers.authorization ?? null, body: JSON.parse(raw) });
      reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const sse = (chunks: unknown[], end = true) => (res: import('node:http').ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  if (end) res.end('data: [DONE]\n\n');
  else setTimeout(() => res.destroy(), 30); // after the first bytes are out: a stream cut mid-way
};

const request: ModelRequest = {
  model: 'local-model',
  system: { stable: 'You are helpful.', dynamic: '<canvas>empty</canvas>' },
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ name: 'create_window', description: 'Open a window', input_schema: { type: 'object', properties: { title: { type: 'string' } } } }],
  max_tokens: 100,
};

async function collect(apiKey?: string) {
  const events: ModelStreamEvent[] = [];
  try {
    for await (const event of createOpenAIStream({ baseURL: base, apiKey: apiKey ?? null })(request, new AbortController().signal)) events.push(event);
    return { events };
  } catch (error) {
    return { events, error: error as ModelError };
  }
}

describe('createOpenAIStream', () => {
  it('streams text and assembles tool calls from argument fragments', async () => {
    reply = sse([
      { choices: [{ delta: { content: 'Open' } }] },
      { choices: [{ delta: { content: 'ing.' } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'create_window', arguments: '{"ti' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'tle":"Plan"}' } }] } }] },
      { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
      { choices: [], usage: { prompt_tokens: 42, completion_tokens: 7 } },
    ]);
    const { events, error } = await collect('local-key');
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text)).toEqual(['Open', 'ing.']);
    const last = events.at(-1);
    expect(last?.type === 'message' && last.message).toMatchObject({
      stop_reason: 'tool_use',
      content: [{ type: 'text', text: 'Opening.' }, { type: 'tool_use', id: 'call_1', name: 'create_window', input: { title: 'Plan' } }],
      usage: { input_tokens: 42, output_tokens: 7 },
    });
    const sent = bodies.at(-1) as { url: string; auth: string; body: { messages: unknown[]; tools: unknown[]; stream: boolean } };
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.auth).toBe('Bearer local-key');
    expect(sent.body.messages[0]).toEqual({ role: 'system', content: 'You are helpful.\n\n<canvas>empty</canvas>' });
    expect(sent.body.tools[0]).toEqual({ type: 'function', function: { name: 'create_window', description: 'Open a window', parameters: request.tools[0]!.input_schema } });
  });

  it('reports a cut-off stream and HTTP errors by cause', async () => {
    reply = sse([{ choices: [{ delta: { content: 'par' } }] }], false);
    expect((await collect()).error?.shape.code).toBe('model_stream_broken');
    reply = (res) => res.writeHead(429, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'slow down' } }));
    expect((await collect()).error?.shape).toMatchObject({ code: 'model_rate_limited', retryable: true, message: 'The model is rate limited: slow down' });
    reply = (res) => res.writeHead(500).end('oops');
    expect((await collect()).error?.shape).toMatchObject({ code: 'model_error', retryable: true });
  });

  it('converts tool results into tool messages', () => {
    expect(
      toChatMessages({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'Opened.' },
          { type: 'text', text: 'thanks' },
        ],
      }),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Opened.' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(toChatMessages({ role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'n', input: { a: 1 } }] as never })).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'n', arguments: '{"a":1}' } }] },
    ]);
  });
});
