// The raw bytes: exact SSE event order and framing, headers, the JSON reply and error bodies —
// what a proxy in between sees, beyond what the SDK happens to tolerate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, startFakeModel } from './server.ts';

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

const body = { model: 'claude-fake-1', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

function post(extra: Record<string, unknown>): Promise<Response> {
  return fetch(`${fake.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'fake-key' },
    body: JSON.stringify({ ...body, ...extra }),
  });
}

/** Splits an SSE body into frames, checking each frame's event name matches its data's type. */
function frames(text: string): Array<{ type: string } & Record<string, unknown>> {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split('\n');
      expect(rest).toEqual([]);
      expect(eventLine).toMatch(/^event: \w+$/);
      const data = JSON.parse((dataLine ?? '').replace(/^data: /, '')) as { type: string };
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
}

describe('wire format', () => {
  it('streams the exact event sequence with SSE headers', async () => {
    fake.load({
      name: 'sequence',
      turns: [
        {
          reply: {
            content: [{ type: 'text', text: 'Hi there' }, { type: 'tool_use', name: 'go', input: { a: 'bc' } }],
            usage: { input_tokens: 7, output_tokens: 9 },
            chunk_chars: 4,
          },
        },
      ],
    });

    const res = await post({ stream: true });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('request-id')).toBe('req_fake_1');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const usage = { input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    expect(frames(await res.text())).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_fake_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-fake-1',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi t' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'here' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_fake_0_1', name: 'go', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ':"bc' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]);
  });

  it('pings after message_start when the content is empty, and ends with event: error mid-stream', async () => {
    fake.load({ name: 'empty', turns: [{ reply: { content: [] } }, { reply: { content: [], stream_error: { after_events: 1, message: 'busy' } } }] });

    const empty = frames(await (await post({ stream: true })).text());
    const broken = frames(await (await post({ stream: true })).text());

    expect(empty.map((e) => e.type)).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
    expect(broken).toEqual([expect.objectContaining({ type: 'message_start' }), { type: 'error', error: { type: 'overloaded_error', message: 'busy' } }]);
  });

  it('spaces events by delay_ms', async () => {
    fake.load({ name: 'slow', turns: [{ reply: { content: [{ type: 'text', text: 'ab' }], delay_ms: 30 } }] });

    const started = Date.now();
    const events = frames(await (await post({ stream: true })).text());

    expect(Date.now() - started).toBeGreaterThanOrEqual(events.length * 30 - 10);
  });

  it('answers a request without stream: true with the JSON message', async () => {
    fake.load({ name: 'json', turns: [{ reply: { content: [{ type: 'text', text: 'whole' }], stop_reason: 'stop_sequence', stop_sequence: '##' } }] });

    const res = await post({});

    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({
      id: 'msg_fake_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-fake-1',
      content: [{ type: 'text', text: 'whole' }],
      stop_reason: 'stop_sequence',
      stop_sequence: '##',
      usage: { input_tokens: Math.ceil(JSON.stringify(body).length / 4), output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('sends API error bodies with the status, default type and extra headers', async () => {
    fake.load({ name: 'errors', turns: [{ reply: { error: { status: 429, headers: { 'retry-after': '3', 'x-should-retry': 'true' } } } }] });

    const res = await post({ stream: true });

    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('x-should-retry')).toBe('true');
    expect(res.headers.get('access-control-expose-headers')).toContain('retry-after');
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
      request_id: 'req_fake_1',
    });
  });

  it('rejects other routes with not_found_error and records a failure', async () => {
    fake.load({ name: 'routes', turns: [] });

    const res = await fetch(`${fake.url}/v1/complete`, { method: 'POST', body: '{}' });

    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(fake.state().failures).toEqual([
      { request: 1, turn: null, message: 'fake model: no route for POST /v1/complete (only POST /v1/messages)' },
    ]);
  });
});
