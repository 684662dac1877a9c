// POST /v1/search: the agent's web_search, answered by the Brave Search API with the owner's key
// (SEARCH_API_KEY) or by the owner's own SearXNG (SEARXNG_URL). The search API gets a fixed GET,
// nothing of the caller's; the answer is a few results with plain-text snippets and http(s) URLs
// only. Neither the query nor the answer is ever logged.
import { MAX_SMALL_REQUEST_BYTES, readCapped } from './body.ts';
import { DEFAULT_SEARCH_UPSTREAM, searchKey, searxngUrl, type Env } from './env.ts';
import { errorResponse, type ProxyErrorType } from './errors.ts';
import { decodeEntities } from './html-text.ts';

export const MAX_QUERY_CHARS = 400;
export const MAX_RESULTS = 20;
export const DEFAULT_RESULTS = 8;
export const DEFAULT_SEARCH_TIMEOUT_MS = 15_000;
/** A search API's answer is tens of KB; anything far bigger is not one. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export const SEARCH_NOT_CONFIGURED_MESSAGE =
  'Web search is not configured on this proxy: its owner sets SEARCH_API_KEY (Brave Search) or ' +
  'SEARXNG_URL (SearXNG). When deployed, `npx wrangler secret put SEARCH_API_KEY`; when running ' +
  'locally, SEARCH_API_KEY or SEARXNG_URL in the environment of `node cloudflare-proxy/local.mjs`.';

export type SearchProviderName = 'brave' | 'searxng';

export interface SearchResult {
  title: string;
  url: string;
  /** Plain text: no tags, no entities. */
  snippet: string;
}

/** The success answer of POST /v1/search. */
export interface SearchAnswer {
  query: string;
  provider: SearchProviderName;
  results: SearchResult[];
}

/** One search API: how to ask it and where its results are in its answer. */
interface Provider {
  name: SearchProviderName;
  /** What messages call it. */
  label: string;
  url(query: string, count: number): string;
  headers: Record<string, string>;
  /** The raw results of a parsed answer, or null when the answer is not this API's. */
  items(answer: unknown): unknown[] | null;
  /** The field of a raw result holding its snippet. */
  snippetField: string;
  /** The message for a 401 or 403 from it. */
  rejected: string;
  /** The message for a 429 from it. */
  rateLimited: string;
  /** The setting to check when it answers something else. */
  setting: string;
}

class SearchError extends Error {
  constructor(
    readonly status: number,
    readonly type: ProxyErrorType,
    message: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export async function search(request: Request, env: Env): Promise<Response> {
  const provider = providerOf(env);
  if (provider === null) {
    await request.body?.cancel();
    return errorResponse(503, 'search_not_configured', SEARCH_NOT_CONFIGURED_MESSAGE, { 'x-should-retry': 'false' });
  }
  let signal: AbortSignal | null = null;
  const timeoutMs = timeoutOf(env);
  try {
    const { query, count } = await readQuery(request);
    // Started after the request is read: the limit is on the search API, not on the caller.
    signal = AbortSignal.timeout(timeoutMs);
    const results = await ask(provider, query, count, signal);
    const answer: SearchAnswer = { query, provider: provider.name, results };
    return Response.json(answer, { headers: { 'cache-control': 'no-store' } });
  } catch (error) {
    if (error instanceof SearchError) return errorResponse(error.status, error.type, error.message, error.headers);
    if (signal?.aborted) return errorResponse(504, 'upstream_timeout', `${provider.label} did not answer within ${timeoutMs / 1000} s. Try again later.`);
    throw error;
  }
}

/** Brave when its key is set, else SearXNG when its URL is, else none. */
function providerOf(env: Env): Provider | null {
  const key = searchKey(env);
  if (key !== null) return brave(key, (env.SEARCH_UPSTREAM?.trim() || DEFAULT_SEARCH_UPSTREAM).replace(/\/+$/, ''));
  const base = searxngUrl(env);
  return base === null ? null : searxng(base);
}

function brave(key: string, base: string): Provider {
  return {
    name: 'brave',
    label: 'Brave Search',
    url: (query, count) => `${base}/res/v1/web/search?${new URLSearchParams({ q: query, count: String(count) })}`,
    headers: { accept: 'application/json', 'x-subscription-token': key },
    // Brave leaves `web` out when nothing was found.
    items: (answer) => (isObject(answer) ? arrayAt(answer.web, 'results') ?? [] : null),
    snippetField: 'description',
    rejected: "The search API refused the proxy's key (Brave Search answered {status}); the proxy's owner checks SEARCH_API_KEY and the Brave plan.",
    rateLimited: "Brave Search is limiting this proxy's key (its plan's requests a second, or its credit). Try again later.",
    setting: 'SEARCH_UPSTREAM',
  };
}

function searxng(base: string): Provider {
  return {
    name: 'searxng',
    label: 'SearXNG',
    url: (query) => `${base}/search?${new URLSearchParams({ q: query, format: 'json' })}`,
    headers: { accept: 'application/json' },
    items: (answer) => arrayAt(answer, 'results'),
    snippetField: 'content',
    rejected:
      "The search API refused the proxy (SearXNG answered {status}); the proxy's owner enables its JSON format " +
      '(json under search.formats in settings.yml) and lets the proxy past anything in front of it.',
    rateLimited: "SearXNG is limiting the proxy's requests (its limiter); its owner may turn it off for the proxy. Try again later.",
    setting: 'SEARXNG_URL',
  };
}

function timeoutOf(env: Env): number {
  const ms = Number(env.SEARCH_TIMEOUT_MS);
  return Number.isInteger(ms) && ms > 0 ? ms : DEFAULT_SEARCH_TIMEOUT_MS;
}

async function readQuery(request: Request): Promise<{ query: string; count: number }> {
  const usage = `Send a JSON body {"query": "words to search for", "count": 1-${MAX_RESULTS}} (count is optional, default ${DEFAULT_RESULTS}).`;
  const invalid = (problem: string) => new SearchError(400, 'invalid_query', `${problem} ${usage}`);
  const declared = Number(request.headers.get('content-length'));
  const bytes = declared > MAX_SMALL_REQUEST_BYTES ? null : await readCapped(request.body, MAX_SMALL_REQUEST_BYTES);
  if (bytes === null) {
    await request.body?.cancel().catch(() => {});
    throw invalid(`The request is over ${MAX_SMALL_REQUEST_BYTES / 1024} KB.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw invalid('The request is not JSON.');
  }
  if (!isObject(body)) throw invalid('The request is not a JSON object.');
  if (typeof body.query !== 'string') throw invalid('No "query" string in the request.');
  const query = body.query.trim();
  const chars = [...query].length;
  if (chars === 0) throw invalid('The query is empty.');
  if (chars > MAX_QUERY_CHARS) throw invalid(`The query is ${chars} characters; at most ${MAX_QUERY_CHARS} are allowed.`);
  const count = body.count === undefined ? DEFAULT_RESULTS : body.count;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_RESULTS) {
    throw invalid(`"count" must be a whole number from 1 to ${MAX_RESULTS}.`);
  }
  return { query, count };
}

/** Asks the search API; throws a SearchError for its refusals, or rethrows once `signal` fires. */
async function ask(provider: Provider, query: string, count: number, signal: AbortSignal): Promise<SearchResult[]> {
  let response: Response;
  try {
    // Fixed headers, none of the caller's; a redirect is not followed, so the key goes nowhere else.
    response = await fetch(provider.url(query, count), { method: 'GET', headers: provider.headers, redirect: 'manual', signal });
  } catch (error) {
    if (signal.aborted) throw error;
    // The thrown error can name hosts and sockets (SEARXNG_URL may be private): a fixed message.
    throw new SearchError(502, 'upstream_unreachable', `${provider.label} could not be reached. Try again later.`);
  }
  const { status } = response;
  if (status === 401 || status === 403) {
    await response.body?.cancel();
    throw new SearchError(502, 'search_rejected', provider.rejected.replace('{status}', String(status)), { 'x-should-retry': 'false' });
  }
  if (status === 429) {
    await response.body?.cancel();
    const retryAfter = response.headers.get('retry-after');
    throw new SearchError(429, 'search_rate_limited', provider.rateLimited, retryAfter === null ? undefined : { 'retry-after': retryAfter });
  }
  const bytes = await readCapped(response.body, MAX_ANSWER_BYTES);
  if (status < 200 || status > 299) {
    throw new SearchError(502, 'upstream_error', `${provider.label} answered ${status}${detailOf(bytes)}. Try again later.`);
  }
  const unreadable = (what: string) => new SearchError(502, 'upstream_error', `${provider.label} answered ${what}; the proxy's owner checks ${provider.setting}.`);
  if (bytes === null) throw unreadable(`more than ${MAX_ANSWER_BYTES / (1024 * 1024)} MB`);
  let answer: unknown;
  try {
    answer = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw unreadable('something that is not JSON');
  }
  const items = provider.items(answer);
  if (items === null) throw unreadable(`JSON that is not a ${provider.label} answer`);
  return resultsOf(items, provider.snippetField, count);
}

/** At most `count` results, each with a title, an http(s) URL and a plain-text snippet. */
function resultsOf(items: readonly unknown[], snippetField: string, count: number): SearchResult[] {
  const results: SearchResult[] = [];
  for (const item of items) {
    if (results.length === count) break;
    if (!isObject(item)) continue;
    const url = webUrl(item.url);
    if (url === null) continue;
    results.push({ title: plainText(item.title), url, snippet: plainText(item[snippetField]) });
  }
  return results;
}

function webUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * Search APIs mark the matched words with tags (Brave's `<strong>`) and escape text as HTML. Only
 * what looks like a tag goes (`<` then a letter or `/`), so "x < 5 > y" in a snippet stays.
 */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return decodeEntities(value.replace(/<\/?[a-z][^<>]*>/gi, '')).replace(/\s+/g, ' ').trim();
}

/** Brave's own explanation of an error (`{"error": {"detail": ...}}`), when it gave one. */
function detailOf(bytes: Uint8Array | null): string {
  if (bytes === null) return '';
  try {
    const answer: unknown = JSON.parse(new TextDecoder().decode(bytes));
    const detail = isObject(answer) && isObject(answer.error) ? answer.error.detail : undefined;
    return typeof detail === 'string' && detail !== '' ? `: ${detail.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayAt(value: unknown, key: string): unknown[] | null {
  const found = isObject(value) ? value[key] : undefined;
  return Array.isArray(found) ? found : null;
}
