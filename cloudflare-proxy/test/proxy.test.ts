// The proxy Worker running in workerd (via Miniflare), against a local fake of the Anthropic API.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { forwardMessages, NOT_CONFIGURED_MESSAGE, UPSTREAM_UNREACHABLE_MESSAGE } from '../src/anthropic.ts';
import { startFakeUpstream, unusedPortUrl, type FakeUpstream } from './fake-upstream.ts';
import { pairLocally } from './pair.ts';

const KEY = 'test-key-123';
const APP_ORIGIN = 'http://localhost:4173';
const OTHER_ALLOWED_ORIGIN = 'http://127.0.0.1:4173';
const ALLOWED = [APP_ORIGIN, OTHER_ALLOWED_ORIGIN];

// Headers the runtime itself adds or that describe the connection, not the client's request.
const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'accept-encoding', 'cf-worker']);

let upstream: FakeUpstream;
let proxy: LocalProxy;
let token: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startLocalProxy({ port: 0, upstream: upstream.url, apiKey: KEY, allowedOrigins: ALLOWED, localPairing: true, deviceRequestsPerMinute: 10_000, anthropicBetaAllowed: ['tools-2099-01-01', 'other-2099-01-01'] });
  token = await pairLocally(proxy.url);
});

afterAll(async () => {
  await proxy?.dispose();
  await upstream?.close();
});

afterEach(() => {
  upstream.received.length = 0;
  upstream.respond((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

function postMessages(base: string, init: { headers?: Record<string, string>; body?: string; search?: string; token?: string } = {}) {
  return fetch(`${base}/v1/messages${init.search ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', authorization: `Bearer ${init.token ?? token}`, ...init.headers },
    body: init.body ?? '{"model":"claude-test","max_tokens":16,"messages":[]}',
  });
}

function errorBody(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

describe('POST /v1/messages', () => {
  it('sends only allow-listed headers upstream, with the key from the secret (never the device token)', async () => {
    const body = '{"model":"claude-test","messages":[{"role":"user","content":"grüße 👋"}]}';
    const response = await postMessages(proxy.url, {
      search: '?beta=true',
      body,
      headers: {
        accept: 'application/json',
        'anthropic-beta': 'tools-2099-01-01',
        'x-api-key': 'client-key-should-not-leak',
        cookie: 'session=should-not-leak',
        'x-stainless-lang': 'js',
        'anthropic-dangerous-direct-browser-access': 'true',
      },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{}');

    expect(upstream.received).toHaveLength(1);
    const [received] = upstream.received;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/v1/messages?beta=true');
    expect(received?.body.toString('utf8')).toBe(body);
    const clientHeaders = Object.fromEntries(
      Object.entries(received?.headers ?? {}).filter(([name]) => !TRANSPORT_HEADERS.has(name)),
    );
    expect(clientHeaders).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'tools-2099-01-01',
      'x-api-key': KEY,
    });
  });

  it('passes only the anthropic-beta values the owner allows, and refuses a request with any other before it reaches the API', async () => {
    expect((await postMessages(proxy.url, { headers: { 'anthropic-beta': 'tools-2099-01-01, OTHER-2099-01-01' } })).status).toBe(200);
    expect(upstream.received.at(-1)?.headers['anthropic-beta']).toBe('tools-2099-01-01, OTHER-2099-01-01');
    upstream.received.length = 0;
    const refused = await postMessages(proxy.url, { headers: { 'anthropic-beta': 'tools-2099-01-01,paid-server-tool-2099-01-01' } });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-should-retry')).toBe('false');
    const body = (await refused.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('beta_not_allowed');
    expect(body.error.message).toContain('"paid-server-tool-2099-01-01"');
    expect(body.error.message).toContain('ANTHROPIC_BETA_ALLOWED');
    expect(upstream.received).toHaveLength(0);
    // With no list (the default) no beta passes.
    const strict = await startLocalProxy({ port: 0, upstream: upstream.url, apiKey: KEY, localPairing: true });
    try {
      const response = await postMessages(strict.url, { token: await pairLocally(strict.url), headers: { 'anthropic-beta': 'tools-2099-01-01' } });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('its owner allows none');
      expect(upstream.received).toHaveLength(0);
    } finally {
      await strict.dispose();
    }
  });

  it('passes back only the response headers the SDK reads, and exposes them to an allowed origin', async () => {
    upstream.respond((_request, response) => {
      response
        .writeHead(200, {
          'content-type': 'application/json',
          'request-id': 'req_test_1',
          'anthropic-ratelimit-requests-remaining': '41',
          'set-cookie': 'upstream=should-not-leak',
          'x-upstream-internal': 'should-not-leak',
        })
        .end('{"id":"msg_1"}');
    });
    const response = await postMessages(proxy.url, { headers: { origin: APP_ORIGIN } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: 'msg_1' });
    expect(response.headers.get('request-id')).toBe('req_test_1');
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('41');
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('x-upstream-internal')).toBeNull();
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(response.headers.get('access-control-expose-headers')).toBe('anthropic-ratelimit-requests-remaining, request-id');
    expect(response.headers.get('vary')).toBe('Origin');
  });

  it('streams SSE through as it arrives, byte for byte', async () => {
    const encoder = new TextEncoder();
    const first = encoder.encode('event: message_start\ndata: {"type":"message_start"}\n\n');
    const rest = encoder.encode(
      'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"héllo 👋"}}\n\n' +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    );
    // Split inside the 4-byte emoji, so any re-decoding along the way would corrupt it.
    const emojiAt = Buffer.from(rest).indexOf(Buffer.from('👋'));
    const restParts = [rest.slice(0, emojiAt + 2), rest.slice(emojiAt + 2)];

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    upstream.respond(async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_sse' });
      response.write(first);
      await released;
      for (const part of restParts) {
        response.write(part);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      response.end();
    });

    try {
      const chunks: Uint8Array[] = [];
      const received = () => Buffer.concat(chunks);
      // The upstream holds the rest until released, so this finishes only if the proxy streams
      // (a buffering proxy would not even send the response headers yet).
      const firstArrived = (async () => {
        const response = await postMessages(proxy.url, {
          headers: { origin: APP_ORIGIN, accept: 'text/event-stream', 'accept-encoding': 'gzip, br' },
        });
        const reader = response.body!.getReader();
        while (received().length < first.length) {
          const { value, done } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
        return { response, reader };
      })();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 5000)));
      const arrived = await Promise.race([firstArrived, timedOut]);
      clearTimeout(timer);
      if (arrived === null) expect.fail('the first SSE event did not arrive while the upstream held the rest');
      const { response, reader } = arrived;
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(response.headers.get('content-encoding')).toBeNull();
      expect(received()).toEqual(Buffer.from(first));

      release();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      expect(received()).toEqual(Buffer.concat([first, rest]));
    } finally {
      release();
    }
  });

  it('passes 429 through with retry-after readable by the browser', async () => {
    const body = '{"type":"error","error":{"type":"rate_limit_error","message":"Slow down."}}';
    upstream.respond((_request, response) => {
      response
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '7', 'x-should-retry': 'true' })
        .end(body);
    });
    const response = await postMessages(proxy.url, { headers: { origin: APP_ORIGIN } });
    expect(response.status).toBe(429);
    expect(await response.text()).toBe(body);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('x-should-retry')).toBe('true');
    expect(response.headers.get('access-control-expose-headers')).toBe('retry-after, x-should-retry');
  });

  it('passes 500 through unchanged', async () => {
    const body = '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}';
    upstream.respond((_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json' }).end(body);
    });
    const response = await postMessages(proxy.url);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(body);
  });
});

describe('CORS and origins', () => {
  it('answers a preflight from an allowed origin', async () => {
    const requested = 'content-type, anthropic-version, x-stainless-retry-count, x-stainless-helper-method';
    const response = await fetch(`${proxy.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: OTHER_ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': requested,
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(OTHER_ALLOWED_ORIGIN);
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    const allowed = response.headers.get('access-control-allow-headers')?.split(', ') ?? [];
    for (const name of requested.split(', ')) expect(allowed).toContain(name);
    expect(response.headers.get('access-control-max-age')).toBe('7200');
    expect(upstream.received).toHaveLength(0);
  });

  it('refuses an origin that is not allowed, before touching the upstream', async () => {
    const response = await postMessages(proxy.url, { headers: { origin: 'https://elsewhere.example' } });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual(
      errorBody('origin_not_allowed', 'Origin https://elsewhere.example may not use this proxy. Add it to ALLOWED_ORIGINS.'),
    );
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(upstream.received).toHaveLength(0);

    const preflight = await fetch(`${proxy.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('other routes', () => {
  it('reports health without revealing the key', async () => {
    const response = await fetch(`${proxy.url}/health`, { headers: { origin: APP_ORIGIN } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ ok: true, anthropic: true, mistral: false, pairing: 'local' });
    expect(text).not.toContain(KEY);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });

  it('answers 404 for unknown paths and 405 for wrong methods', async () => {
    const missing = await fetch(`${proxy.url}/v1/complete`, { method: 'POST' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(
      errorBody('not_found', "No route /v1/complete. This proxy serves POST /v1/messages, POST /v1/fetch, POST /v1/search, POST /v1/ocr, /v1/mcp, GET /v1/device, POST /v1/pair and GET /health (and the owner's /v1/owner/...)."),
    );

    const getMessages = await fetch(`${proxy.url}/v1/messages`);
    expect(getMessages.status).toBe(405);
    expect(getMessages.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await getMessages.json()).toEqual(
      errorBody('method_not_allowed', 'GET is not allowed on /v1/messages; use POST.'),
    );

    const postHealth = await fetch(`${proxy.url}/health`, { method: 'POST' });
    expect(postHealth.status).toBe(405);
    expect(postHealth.headers.get('allow')).toBe('GET, OPTIONS');
    expect(upstream.received).toHaveLength(0);
  });
});

describe('misconfiguration and outages', () => {
  it('answers 503 proxy_not_configured without a key, and health says so', async () => {
    const unconfigured = await startLocalProxy({ port: 0, upstream: upstream.url, allowedOrigins: ALLOWED, localPairing: true, deviceRequestsPerMinute: 10_000 });
    try {
      const response = await postMessages(unconfigured.url, { headers: { origin: APP_ORIGIN }, token: await pairLocally(unconfigured.url) });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual(errorBody('proxy_not_configured', NOT_CONFIGURED_MESSAGE));
      expect(NOT_CONFIGURED_MESSAGE).toContain('wrangler secret put ANTHROPIC_API_KEY');
      expect(NOT_CONFIGURED_MESSAGE).toContain('`npm start`');
      // Retrying cannot help, and the browser SDK must be able to see that.
      expect(response.headers.get('x-should-retry')).toBe('false');
      expect(response.headers.get('access-control-expose-headers')).toBe('x-should-retry');
      expect(upstream.received).toHaveLength(0);

      const health = await fetch(`${unconfigured.url}/health`);
      expect(await health.json()).toEqual({ ok: true, anthropic: false, mistral: false, pairing: 'local' });
    } finally {
      await unconfigured.dispose();
    }
  });

  it('answers 502 proxy_upstream_unreachable when the upstream is down', async () => {
    const down = await startLocalProxy({ port: 0, upstream: await unusedPortUrl(), apiKey: KEY, localPairing: true, deviceRequestsPerMinute: 10_000 });
    try {
      const response = await postMessages(down.url, { token: await pairLocally(down.url) });
      expect(response.status).toBe(502);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual(errorBody('proxy_upstream_unreachable', UPSTREAM_UNREACHABLE_MESSAGE));
      expect(text).not.toContain(KEY);
    } finally {
      await down.dispose();
    }
  });
});

describe('forwardMessages, when the client leaves before the answer starts', () => {
  // Run here in Node: Miniflare does not tell the Worker that a client left before its answer
  // (request.signal), which Cloudflare does.
  it('waits a while, then stops the call and counts its estimated input', async () => {
    let stopped = false;
    upstream.respond((_request, response) => void response.on('close', () => (stopped = true)));
    const leaving = new AbortController();
    const body = new TextEncoder().encode('{"model":"m","max_tokens":8,"messages":[]}');
    const usage: number[] = [];
    let counting: Promise<void> | null = null;
    const answer = forwardMessages(
      new Request('http://proxy.test/v1/messages', { method: 'POST', signal: leaving.signal }),
      { ANTHROPIC_API_KEY: KEY, ANTHROPIC_UPSTREAM: upstream.url, MESSAGES_LEFT_READ_MS: '200' } as Parameters<typeof forwardMessages>[1],
      body,
      (tokens) => usage.push(tokens),
      (done) => (counting = done),
    );
    // Kept alive from the start, not from an answer that may never come.
    expect(counting).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 50));
    leaving.abort();
    expect((await answer).status).toBe(502);
    await counting;
    // A quarter of the request's 43 bytes, rounded up.
    expect(usage).toEqual([11]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(true);
  });
});
