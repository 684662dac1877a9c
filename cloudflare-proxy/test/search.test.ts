// POST /v1/search in workerd (via Miniflare) against local fakes of the Brave Search API and of a
// SearXNG instance: the key goes upstream in Brave's header and nowhere else, none of the caller's
// headers follow, snippets come back as plain text with http(s) URLs only and at most `count`, and
// every refusal (no search configured, no device, a bad query, the API's own errors, a timeout)
// has its status and error type.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { pairLocally } from './pair.ts';
import { startFakeUpstream, unusedPortUrl, type FakeUpstream, type ReceivedRequest, type UpstreamHandler } from './fake-upstream.ts';

const BRAVE_KEY = 'brave-test-key-789';
const APP_ORIGIN = 'http://localhost:4173';
const TIMEOUT_MS = 500;
const TRANSPORT_HEADERS = new Set(['host', 'connection', 'accept-encoding', 'cf-worker']);

/** Twelve results as Brave gives them: `<strong>` around matches, entities, and three non-web URLs among them. */
const BRAVE_RESULTS = [
  { title: 'Vitest &amp; <strong>Vite</strong>', url: 'https://vitest.dev/', description: 'A <strong>Vite</strong>-native test framework. It&#x27;s fast &mdash; really.' },
  { title: 'FTP mirror', url: 'ftp://mirror.example/vitest.tgz', description: 'Not a web page.' },
  { title: 'Script', url: 'javascript:alert(1)', description: 'Not a web page either.' },
  { title: 'Relative', url: '/vitest', description: 'No scheme at all.' },
  ...Array.from({ length: 9 }, (_, i) => ({ title: `Result ${i + 2}`, url: `http://site${i + 2}.example/page?q=${i + 2}`, description: `<em>Snippet</em> ${i + 2}` })),
];

const SEARXNG_RESULTS = [
  { title: 'SearXNG &quot;docs&quot;', url: 'https://docs.searxng.org/', content: 'Search <b>without</b>\n  being tracked; x < 5 > y stays.', engine: 'duckduckgo' },
  { title: 'Data', url: 'data:text/html,<p>hi</p>', content: 'Not a web page.', engine: 'bing' },
  { title: 'No snippet', url: 'https://example.org/none', engine: 'bing' },
];

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Brave's API as far as the proxy uses it: refuses without the key, answers `web.results`. */
const braveApi: UpstreamHandler = (request, response) => {
  const url = new URL(request.url, 'http://brave.test');
  if (request.headers['x-subscription-token'] !== BRAVE_KEY) {
    return json(response, 401, { type: 'ErrorResponse', error: { status: 401, code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' } });
  }
  if (url.pathname !== '/res/v1/web/search' || !url.searchParams.get('q')) return json(response, 404, {});
  json(response, 200, { type: 'search', query: { original: url.searchParams.get('q') }, web: { type: 'search', results: BRAVE_RESULTS } });
};

/** SearXNG as far as the proxy uses it: JSON only when asked for, under the instance's own path. */
const searxngApi: UpstreamHandler = (request, response) => {
  const url = new URL(request.url, 'http://searxng.test');
  if (url.pathname !== '/searxng/search' || !url.searchParams.get('q')) return json(response, 404, {});
  if (url.searchParams.get('format') !== 'json') return void response.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden');
  json(response, 200, { query: url.searchParams.get('q'), number_of_results: 0, results: SEARXNG_RESULTS, answers: [], suggestions: [] });
};

let brave: FakeUpstream;
let searxng: FakeUpstream;
let braveProxy: LocalProxy;
let searxngProxy: LocalProxy;
let bareProxy: LocalProxy;
const tokens = new Map<LocalProxy, string>();

async function pairedProxy(options: Parameters<typeof startLocalProxy>[0]): Promise<LocalProxy> {
  const proxy = await startLocalProxy({ port: 0, allowedOrigins: [APP_ORIGIN], localPairing: true, deviceRequestsPerMinute: 10_000, searchTimeoutMs: TIMEOUT_MS, ...options });
  tokens.set(proxy, await pairLocally(proxy.url));
  return proxy;
}

beforeAll(async () => {
  [brave, searxng] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  // Both set on the first: the Brave key wins.
  [braveProxy, searxngProxy, bareProxy] = await Promise.all([
    pairedProxy({ searchApiKey: BRAVE_KEY, searchUpstream: brave.url, searxngUrl: `${searxng.url}/searxng` }),
    pairedProxy({ searxngUrl: `${searxng.url}/searxng/` }),
    pairedProxy({}),
  ]);
});

afterAll(async () => {
  await Promise.all([braveProxy, searxngProxy, bareProxy].map((proxy) => proxy?.dispose()));
  await Promise.all([brave, searxng].map((fake) => fake?.close()));
});

beforeEach(() => {
  brave.received.length = 0;
  searxng.received.length = 0;
  brave.respond(braveApi);
  searxng.respond(searxngApi);
});

function post(proxy: LocalProxy, body: string, headers: Record<string, string> = {}) {
  return fetch(`${proxy.url}/v1/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(proxy)}`, ...headers },
    body,
  });
}

function searchVia(proxy: LocalProxy, request: Record<string, unknown>, headers: Record<string, string> = {}) {
  return post(proxy, JSON.stringify(request), headers);
}

async function expectError(response: Response, status: number, type: string): Promise<string> {
  const body = await response.json();
  expect({ status: response.status, body }).toMatchObject({ status, body: { type: 'error', error: { type } } });
  expect(typeof body.error.message).toBe('string');
  return body.error.message as string;
}

function sentHeaders(request: ReceivedRequest): Record<string, unknown> {
  return Object.fromEntries(Object.entries(request.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name)));
}

describe('POST /v1/search with Brave Search', () => {
  it('asks Brave with the key and the count, and answers plain-text snippets with web URLs only', async () => {
    const response = await searchVia(braveProxy, { query: '  vitest & vite  ', count: 3 });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      query: 'vitest & vite',
      provider: 'brave',
      results: [
        { title: 'Vitest & Vite', url: 'https://vitest.dev/', snippet: "A Vite-native test framework. It's fast — really." },
        { title: 'Result 2', url: 'http://site2.example/page?q=2', snippet: 'Snippet 2' },
        { title: 'Result 3', url: 'http://site3.example/page?q=3', snippet: 'Snippet 3' },
      ],
    });
    expect(brave.received).toHaveLength(1);
    expect(searxng.received).toHaveLength(0);
    const [asked] = brave.received;
    expect(asked!.method).toBe('GET');
    const url = new URL(asked!.url, brave.url);
    expect(url.pathname).toBe('/res/v1/web/search');
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: 'vitest & vite', count: '3' });
  });

  it('sends only accept and the key: none of the caller\'s headers, cookies or token', async () => {
    const response = await searchVia(braveProxy, { query: 'vitest' }, { origin: APP_ORIGIN, cookie: 'session=secret', 'x-api-key': 'caller-key', 'x-custom': 'caller' });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(sentHeaders(brave.received[0]!)).toEqual({ accept: 'application/json', 'x-subscription-token': BRAVE_KEY });
  });

  it('asks for 8 results when no count is given, and never answers more than the count', async () => {
    const answer = await (await searchVia(braveProxy, { query: 'vitest' })).json();
    expect(new URL(brave.received[0]!.url, brave.url).searchParams.get('count')).toBe('8');
    expect(answer.results).toHaveLength(8);
    expect(answer.results.map((result: { url: string }) => new URL(result.url).protocol)).toEqual(Array(8).fill('https:', 0, 1).fill('http:', 1));
    // Brave gives 12 of which 9 are web pages: all of them for 20, and still no ftp: or javascript:.
    const all = await (await searchVia(braveProxy, { query: 'vitest', count: 20 })).json();
    expect(all.results).toHaveLength(10);
  });

  it('answers an empty list when Brave found nothing (it leaves `web` out)', async () => {
    brave.respond((_request, response) => json(response, 200, { type: 'search', query: { original: 'zxqv' }, mixed: {} }));
    expect(await (await searchVia(braveProxy, { query: 'zxqv' })).json()).toEqual({ query: 'zxqv', provider: 'brave', results: [] });
  });
});

describe('POST /v1/search with SearXNG', () => {
  it('asks the instance for JSON under its own path and cleans its results', async () => {
    const response = await searchVia(searxngProxy, { query: 'searxng docs', count: 5 });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      query: 'searxng docs',
      provider: 'searxng',
      results: [
        { title: 'SearXNG "docs"', url: 'https://docs.searxng.org/', snippet: 'Search without being tracked; x < 5 > y stays.' },
        { title: 'No snippet', url: 'https://example.org/none', snippet: '' },
      ],
    });
    expect(brave.received).toHaveLength(0);
    const [asked] = searxng.received;
    const url = new URL(asked!.url, searxng.url);
    expect(url.pathname).toBe('/searxng/search');
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: 'searxng docs', format: 'json' });
    expect(sentHeaders(asked!)).toEqual({ accept: 'application/json' });
  });

  it('honours the count, though SearXNG has no parameter for it', async () => {
    const answer = await (await searchVia(searxngProxy, { query: 'searxng', count: 1 })).json();
    expect(answer.results.map((result: { url: string }) => result.url)).toEqual(['https://docs.searxng.org/']);
  });

  it('says how to enable the JSON format when the instance refuses it', async () => {
    searxng.respond((_request, response) => void response.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden'));
    const message = await expectError(await searchVia(searxngProxy, { query: 'searxng' }), 502, 'search_rejected');
    expect(message).toContain('search.formats');
  });

  it('refuses an answer that is not SearXNG\'s', async () => {
    searxng.respond((_request, response) => json(response, 200, { hello: 'world' }));
    const message = await expectError(await searchVia(searxngProxy, { query: 'searxng' }), 502, 'upstream_error');
    expect(message).toContain('SEARXNG_URL');
  });
});

describe('POST /v1/search refusals', () => {
  it('answers 503 search_not_configured, saying what to set, when neither provider is', async () => {
    const response = await searchVia(bareProxy, { query: 'vitest' });
    expect(response.headers.get('x-should-retry')).toBe('false');
    const message = await expectError(response, 503, 'search_not_configured');
    expect(message).toContain('SEARCH_API_KEY');
    expect(message).toContain('SEARXNG_URL');
  });

  it('needs a paired device, before anything goes upstream', async () => {
    const response = await fetch(`${braveProxy.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"vitest"}' });
    await expectError(response, 401, 'device_not_paired');
    await expectError(await searchVia(braveProxy, { query: 'vitest' }, { authorization: 'Bearer sdk_dev_not-a-real-token' }), 401, 'device_token_invalid');
    expect(brave.received).toHaveLength(0);
  });

  it('refuses an origin that is not allowed, before anything goes upstream', async () => {
    await expectError(await searchVia(braveProxy, { query: 'vitest' }, { origin: 'https://evil.example' }), 403, 'origin_not_allowed');
    expect(brave.received).toHaveLength(0);
  });

  it.each([
    ['an empty query', JSON.stringify({ query: '' })],
    ['a query of spaces', JSON.stringify({ query: '   \n ' })],
    ['a query of 401 characters', JSON.stringify({ query: 'q'.repeat(401) })],
    ['a query that is a number', JSON.stringify({ query: 42 })],
    ['no query', JSON.stringify({ count: 3 })],
    ['a count of 0', JSON.stringify({ query: 'vitest', count: 0 })],
    ['a count of 21', JSON.stringify({ query: 'vitest', count: 21 })],
    ['a count of 2.5', JSON.stringify({ query: 'vitest', count: 2.5 })],
    ['a count as a string', JSON.stringify({ query: 'vitest', count: '3' })],
    ['a count of null', JSON.stringify({ query: 'vitest', count: null })],
    ['an array', JSON.stringify([{ query: 'vitest' }])],
    ['not JSON', 'query=vitest'],
    ['no body', ''],
    ['a body over 4 KB', JSON.stringify({ query: 'vitest', padding: 'x'.repeat(5000) })],
  ])('answers 400 invalid_query to %s, saying what to send', async (_name, body) => {
    const message = await expectError(await post(braveProxy, body), 400, 'invalid_query');
    expect(message).toContain('{"query":');
    expect(brave.received).toHaveLength(0);
  });

  it('takes a query of exactly 400 characters (emoji count as one), trimmed first', async () => {
    const query = '😀'.repeat(200) + 'q'.repeat(200);
    const response = await searchVia(braveProxy, { query: `  ${query}  `, count: 1 });
    expect(response.status).toBe(200);
    expect((await response.json()).query).toBe(query);
    expect(new URL(brave.received[0]!.url, brave.url).searchParams.get('q')).toBe(query);
  });
});

describe('POST /v1/search when the search API fails', () => {
  it('answers 502 search_rejected when Brave refuses the key', async () => {
    brave.respond((_request, response) => json(response, 401, { type: 'ErrorResponse', error: { status: 401, detail: 'The provided subscription token is invalid.' } }));
    const response = await searchVia(braveProxy, { query: 'vitest' });
    expect(response.headers.get('x-should-retry')).toBe('false');
    const message = await expectError(response, 502, 'search_rejected');
    expect(message).toContain("refused the proxy's key");
    expect(message).not.toContain(BRAVE_KEY);
  });

  it('passes a 429 on as search_rate_limited with its retry-after', async () => {
    brave.respond((_request, response) => json(response, 429, { type: 'ErrorResponse', error: { status: 429, code: 'RATE_LIMITED' } }, { 'retry-after': '7' }));
    const limited = await searchVia(braveProxy, { query: 'vitest' });
    expect(limited.headers.get('retry-after')).toBe('7');
    await expectError(limited, 429, 'search_rate_limited');
    brave.respond((_request, response) => json(response, 429, {}));
    const unsaid = await searchVia(braveProxy, { query: 'vitest' });
    expect(unsaid.headers.get('retry-after')).toBeNull();
    await expectError(unsaid, 429, 'search_rate_limited');
  });

  it('answers 502 upstream_error for another error status, with Brave\'s reason when it gave one', async () => {
    brave.respond((_request, response) => json(response, 422, { type: 'ErrorResponse', error: { status: 422, code: 'VALIDATION', detail: 'Unable to validate request parameter(s)' } }));
    const message = await expectError(await searchVia(braveProxy, { query: 'vitest' }), 502, 'upstream_error');
    expect(message).toBe('Brave Search answered 422: Unable to validate request parameter(s). Try again later.');
    brave.respond((_request, response) => void response.writeHead(500, { 'content-type': 'text/html' }).end('<h1>Oops</h1>'));
    expect(await expectError(await searchVia(braveProxy, { query: 'vitest' }), 502, 'upstream_error')).toBe('Brave Search answered 500. Try again later.');
  });

  it('answers 502 upstream_error for an answer that is not JSON', async () => {
    brave.respond((_request, response) => void response.writeHead(200, { 'content-type': 'text/html' }).end('<html>a login page</html>'));
    await expectError(await searchVia(braveProxy, { query: 'vitest' }), 502, 'upstream_error');
  });

  it('does not follow a redirect, so the key goes nowhere else', async () => {
    brave.respond((_request, response) => void response.writeHead(302, { location: `${searxng.url}/elsewhere` }).end());
    expect(await expectError(await searchVia(braveProxy, { query: 'vitest' }), 502, 'upstream_error')).toContain('answered 302');
    expect(brave.received).toHaveLength(1);
    expect(searxng.received).toHaveLength(0);
  });

  it('gives up after the time limit with 504 upstream_timeout', async () => {
    brave.respond(() => {}); // never answers
    const started = Date.now();
    const message = await expectError(await searchVia(braveProxy, { query: 'vitest' }), 504, 'upstream_timeout');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(4 * TIMEOUT_MS);
    expect(message).toContain('within 0.5 s');
  });

  it('gives up on an answer whose body never ends', async () => {
    brave.respond((_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).write('{"type":"search","web":{"results":['));
    await expectError(await searchVia(braveProxy, { query: 'vitest' }), 504, 'upstream_timeout');
  });

  it('answers 502 upstream_unreachable when the search API cannot be reached, naming no address', async () => {
    const dead = await unusedPortUrl();
    const proxy = await pairedProxy({ searxngUrl: dead });
    try {
      const message = await expectError(await searchVia(proxy, { query: 'vitest' }), 502, 'upstream_unreachable');
      expect(message).not.toContain(new URL(dead).port);
    } finally {
      await proxy.dispose();
    }
  });
});
