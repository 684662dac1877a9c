// @anthropic-ai/sdk, configured as the app configures it (no key in the client), talking to the
// proxy Worker under Miniflare: the proxy must fit what the real SDK sends and expects.
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { pairLocally } from './pair.ts';
import { NOT_CONFIGURED_MESSAGE } from '../src/anthropic.ts';
import { ALLOWED_REQUEST_HEADERS } from '../src/cors.ts';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';

const KEY = 'test-key-123';

const START_MESSAGE = {
  id: 'msg_test',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [],
  stop_reason: null,
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 1 },
};

const TRANSCRIPT: ReadonlyArray<Record<string, unknown> & { type: string }> = [
  { type: 'message_start', message: START_MESSAGE },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello from ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'the proxy.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } },
  { type: 'message_stop' },
];

/** The client the app builds (worker/agent/anthropic.ts), recording each request's header names. */
function createClient(baseURL: string, sentHeaderNames: Set<string>, options: { maxRetries?: number } = {}) {
  return new Anthropic({
    baseURL,
    apiKey: null,
    // The device token, as the app sends it through the proxy: never a key.
    authToken: token,
    // Adds anthropic-dangerous-direct-browser-access, which a browser build may send.
    dangerouslyAllowBrowser: true,
    maxRetries: options.maxRetries ?? 0,
    fetch: async (input, init) => {
      for (const name of new Headers(init?.headers).keys()) sentHeaderNames.add(name);
      return fetch(input, init);
    },
  });
}

let upstream: FakeUpstream;
let proxy: LocalProxy;
let token: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startLocalProxy({ port: 0, upstream: upstream.url, apiKey: KEY, localPairing: true, deviceRequestsPerMinute: 10_000 });
  token = await pairLocally(proxy.url);
});

afterAll(async () => {
  await proxy?.dispose();
  await upstream?.close();
});

describe('@anthropic-ai/sdk through the proxy', () => {
  it('streams a message, and every header it sends passes the CORS preflight', async () => {
    upstream.respond((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_sdk' });
      response.end(TRANSCRIPT.map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
    });
    const sent = new Set<string>();
    const client = createClient(proxy.url, sent);

    const stream = client.messages.stream({
      model: 'claude-test',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the proxy.' }]);
    expect(message.stop_reason).toBe('end_turn');

    const received = upstream.received.at(-1);
    expect(received?.headers['x-api-key']).toBe(KEY);
    expect(received?.headers.authorization).toBeUndefined();

    expect(sent.has('x-stainless-helper-method')).toBe(true);
    const notAllowed = [...sent].filter((name) => !ALLOWED_REQUEST_HEADERS.includes(name));
    expect(notAllowed).toEqual([]);
  });

  it('surfaces proxy_not_configured as an APIError with the message, without retrying', async () => {
    const unconfigured = await startLocalProxy({ port: 0, upstream: upstream.url, localPairing: true, deviceRequestsPerMinute: 10_000 });
    try {
      let calls = 0;
      const client = new Anthropic({
        baseURL: unconfigured.url,
        apiKey: null,
        authToken: await pairLocally(unconfigured.url),
        maxRetries: 2,
        fetch: async (input, init) => {
          calls += 1;
          return fetch(input, init);
        },
      });
      const error = await client.messages
        .create({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] })
        .then(() => null, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(APIError);
      const apiError = error as APIError;
      expect(apiError.status).toBe(503);
      expect(apiError.type).toBe('proxy_not_configured');
      expect(apiError.apiMessage).toBe(NOT_CONFIGURED_MESSAGE);
      expect(calls).toBe(1);
    } finally {
      await unconfigured.dispose();
    }
  });
});
