// POST /v1/fetch: the agent's web_fetch, done here so pages load without the browser's CORS
// limits, and guarded so the proxy never becomes a way into private networks: only http(s), no
// local names or private addresses (every redirect hop re-checked), a time limit, a size cap, and
// none of the caller's headers or cookies forwarded. HTML comes back as readable text. Neither
// the request nor the page is ever logged.
import { refuseUrl } from './address.ts';
import { readBody } from './body.ts';
import type { Env } from './env.ts';
import { errorResponse, type ProxyErrorType } from './errors.ts';
import { htmlToText } from './html-text.ts';
import { fetchChecked } from './pinned-http.ts';

export const MAX_PAGE_BYTES = 5 * 1024 * 1024;
/** Text kept from an HTML page; far more than the agent reads at once, and it bounds CPU time. */
export const MAX_HTML_TEXT_CHARS = 200_000;
export const MAX_REDIRECTS = 5;
export const DEFAULT_TIMEOUT_MS = 20_000;
export const USER_AGENT = 'StackdocsFetch/1.0';
const MAX_REQUEST_BYTES = 8 * 1024;

// The only headers sent to a site: fixed here, never copied from the caller.
const UPSTREAM_HEADERS = {
  'user-agent': USER_AGENT,
  accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/xml;q=0.8,text/*;q=0.7',
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The success answer of POST /v1/fetch. */
export interface FetchedPage {
  url: string;
  final_url: string;
  status: number;
  content_type: string;
  title: string;
  text: string;
  truncated: boolean;
}

class PageError extends Error {
  constructor(
    readonly status: number,
    readonly type: ProxyErrorType,
    message: string,
  ) {
    super(message);
  }
}

export async function fetchPage(request: Request, env: Env): Promise<Response> {
  const timeoutMs = timeoutOf(env);
  const signal = AbortSignal.timeout(timeoutMs);
  let target: URL | null = null;
  try {
    target = await readTarget(request);
    const allowHosts = new Set((env.WEB_FETCH_ALLOW_HOSTS ?? '').split(',').map((host) => host.trim()).filter(Boolean));
    const { response, url } = await followRedirects(env, target, allowHosts, signal);
    const page = await readPage(response, url);
    const body: FetchedPage = { url: target.href, final_url: url.href, status: response.status, ...page };
    return Response.json(body, { headers: { 'cache-control': 'no-store' } });
  } catch (error) {
    if (error instanceof PageError) return errorResponse(error.status, error.type, error.message);
    if (signal.aborted) {
      const message = `${target?.href ?? 'The page'} did not finish loading within ${timeoutMs / 1000} s.`;
      return errorResponse(504, 'upstream_timeout', message);
    }
    throw error;
  }
}

function timeoutOf(env: Env): number {
  const ms = Number(env.WEB_FETCH_TIMEOUT_MS);
  return Number.isInteger(ms) && ms > 0 ? ms : DEFAULT_TIMEOUT_MS;
}

async function readTarget(request: Request): Promise<URL> {
  const usage = 'Send a JSON body {"url": "https://..."}.';
  // Capped as it is read: a chunked body has no length to check first.
  const read = await readBody(request, MAX_REQUEST_BYTES, 'The web_fetch request');
  if (read instanceof Response) throw new PageError(413, 'request_too_large', `The web_fetch request is over this proxy's limit of ${MAX_REQUEST_BYTES / 1024} KB. ${usage}`);
  const raw = new TextDecoder().decode(read);
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new PageError(400, 'invalid_url', `The request is not JSON. ${usage}`);
  }
  const url = (body as { url?: unknown } | null)?.url;
  if (typeof url !== 'string') throw new PageError(400, 'invalid_url', `No "url" in the request. ${usage}`);
  const parsed = parseUrl(url);
  if (parsed === null) throw new PageError(400, 'invalid_url', `"${url.slice(0, 200)}" is not a URL.`);
  return parsed;
}

function parseUrl(text: string, base?: URL): URL | null {
  try {
    return new URL(text, base);
  } catch {
    return null;
  }
}

/** Fetches `start`, following up to MAX_REDIRECTS redirects itself so that every hop is checked. */
async function followRedirects(env: Env, start: URL, allowHosts: ReadonlySet<string>, signal: AbortSignal): Promise<{ response: Response; url: URL }> {
  let url = start;
  for (let redirects = 0; ; redirects++) {
    const refusal = refuseUrl(url, allowHosts);
    const via = url === start ? '' : ` (redirected from ${start.href})`;
    if (refusal) throw new PageError(refusal.type === 'blocked_address' ? 403 : 400, refusal.type, `${refusal.message}${via}`);
    let response: Response;
    try {
      if (allowHosts.has(url.host) || /^[\d.]+$|^\[/.test(url.hostname)) {
        // An address as written (checked above), or a test's server: no name to look up.
        response = await fetch(url.href, { method: 'GET', headers: UPSTREAM_HEADERS, redirect: 'manual', signal });
      } else {
        // A public-looking name may point at a private address: judged on every address it
        // resolves to, and fetched from the address judged, not looked up again.
        const answer = await fetchChecked(env, url, { method: 'GET', headers: new Headers(UPSTREAM_HEADERS), signal }, (at) => allowHosts.has(at));
        if (!(answer instanceof Response)) throw new PageError(answer.blocked ? 403 : 502, answer.blocked ? 'blocked_address' : 'upstream_unreachable', `${answer.message}${via}`);
        response = answer;
      }
    } catch (error) {
      if (signal.aborted || error instanceof PageError) throw error;
      throw new PageError(502, 'upstream_unreachable', `${url.host} could not be reached (${(error as Error).message}).`);
    }
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) return { response, url };
    await response.body?.cancel();
    if (redirects === MAX_REDIRECTS) {
      throw new PageError(502, 'too_many_redirects', `${start.href} redirected more than ${MAX_REDIRECTS} times; the last hop was ${url.href}.`);
    }
    const next = parseUrl(location, url);
    if (next === null) throw new PageError(502, 'invalid_url', `${url.href} redirected to "${location.slice(0, 200)}", which is not a URL.`);
    url = next;
  }
}

type Kind = 'html' | 'text' | 'unknown';

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/yaml',
  'application/x-yaml',
  'application/x-ndjson',
  'application/csv',
]);

function kindOf(mime: string): Kind | null {
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime.startsWith('text/') || TEXT_TYPES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml')) return 'text';
  return mime === '' ? 'unknown' : null;
}

async function readPage(response: Response, url: URL): Promise<Omit<FetchedPage, 'url' | 'final_url' | 'status'>> {
  const contentType = response.headers.get('content-type') ?? '';
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  let kind = kindOf(mime);
  if (kind === null) {
    await response.body?.cancel();
    throw notText(url, mime);
  }
  const { bytes, truncated } = await readCapped(response, MAX_PAGE_BYTES);
  if (kind === 'unknown') {
    // No content type: a NUL byte near the start means binary; markup at the start means HTML.
    const head = latin1(bytes.subarray(0, 1024));
    if (head.includes('\0')) throw notText(url, 'an unlabelled binary file');
    kind = /^\s*(<!doctype html|<html)/i.test(head) ? 'html' : 'text';
  }
  const raw = decode(bytes, charsetOf(contentType) ?? (kind === 'html' ? metaCharset(bytes) : null));
  const resolvedType = mime || (kind === 'html' ? 'text/html' : 'text/plain');
  if (kind === 'text') return { content_type: resolvedType, title: '', text: raw, truncated };
  const page = await htmlToText(raw, url.href, MAX_HTML_TEXT_CHARS);
  return { content_type: resolvedType, title: page.title, text: page.text, truncated: truncated || page.cut };
}

function notText(url: URL, what: string): PageError {
  return new PageError(
    415,
    'unsupported_content_type',
    `${url.href} is ${what}, not a web page or text, so web_fetch cannot read it. Ask the user to download the file and upload it instead.`,
  );
}

/** Reads at most `max` bytes, then stops reading and says the page was cut. */
async function readCapped(response: Response, max: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    // The fetch's time-limit signal also covers the body: a read rejects once it fires.
    const { value, done } = await reader.read();
    if (done) break;
    if (size + value.byteLength > max) {
      chunks.push(value.subarray(0, max - size));
      size = max;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, truncated };
}

function charsetOf(contentType: string): string | null {
  return /;\s*charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1] ?? null;
}

function metaCharset(bytes: Uint8Array): string | null {
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(latin1(bytes.subarray(0, 2048)))?.[1] ?? null;
}

function latin1(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return text;
}

/** Decodes with the page's charset when the runtime knows it, else as UTF-8. */
function decode(bytes: Uint8Array, charset: string | null): string {
  if (charset !== null) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      // An unknown label: UTF-8 is the web's default and the best guess left.
    }
  }
  return new TextDecoder().decode(bytes);
}
