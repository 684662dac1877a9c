// POST /v1/fetch: the agent's web_fetch, done here so pages load without the browser's CORS
// limits, and guarded so the proxy never becomes a way into private networks: only http(s), no
// private or local addresses (every redirect hop re-checked), a time limit and a size cap, and no
// header or cookie of the caller ever forwarded. HTML comes back as readable text.
import type { Env } from './env.ts';
import { errorResponse } from './errors.ts';

const MAX_BYTES = 5 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const DEFAULT_TIMEOUT_MS = 20_000;

export async function fetchPage(request: Request, env: Env): Promise<Response> {
  const body = (await request.json().catch(() => null)) as { url?: unknown } | null;
  if (!body || typeof body.url !== 'string') return errorResponse(400, 'invalid_url', 'Send {"url": "https://..."}.');
  let url: URL;
  try {
    url = new URL(body.url);
  } catch {
    return errorResponse(400, 'invalid_url', `"${body.url.slice(0, 200)}" is not a URL.`);
  }
  const allowed = new Set((env.WEB_FETCH_ALLOW_HOSTS ?? '').split(',').map((host) => host.trim()).filter(Boolean));
  const timeout = Number(env.WEB_FETCH_TIMEOUT_MS) > 0 ? Number(env.WEB_FETCH_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeout);
  let response: Response | null = null;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const refusal = refuse(url, allowed);
    if (refusal) return errorResponse(403, 'blocked_address', refusal);
    try {
      response = await fetch(url.href, { redirect: 'manual', signal, headers: { 'user-agent': 'StackdocsFetch/1.0', accept: 'text/html,text/plain,application/json,application/xml;q=0.9,*/*;q=0.5' } });
    } catch (error) {
      if (signal.aborted) return errorResponse(504, 'upstream_timeout', `${url.href} did not answer within ${Math.round(timeout / 1000)} s.`);
      return errorResponse(502, 'upstream_unreachable', `${url.host} could not be reached (${(error as Error).message}).`);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      url = new URL(location, url);
      response = null;
      continue;
    }
    break;
  }
  if (!response) return errorResponse(508, 'too_many_redirects', `More than ${MAX_REDIRECTS} redirects from ${body.url.slice(0, 200)}.`);
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const textual = type.startsWith('text/') || type === 'application/json' || type.endsWith('+json') || type.endsWith('+xml') || type === 'application/xml' || type === '';
  if (!textual) {
    await response.body?.cancel();
    return errorResponse(415, 'unsupported_content_type', `${url.href} is ${type}, not text; ask the user to download it and attach it instead.`);
  }
  const { text: raw, truncated } = await readCapped(response, MAX_BYTES);
  const page = type === 'text/html' || type === 'application/xhtml+xml' ? await htmlToText(raw) : { title: '', text: raw };
  return Response.json(
    { url: body.url, final_url: url.href, status: response.status, content_type: type || 'text/plain', title: page.title, text: page.text, truncated },
    { headers: { 'cache-control': 'no-store' } },
  );
}

/** Why a URL may not be fetched, or null when it may. */
export function refuse(url: URL, allowed: Set<string>): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Only http and https pages can be fetched, not ${url.protocol}`;
  if (allowed.has(url.host)) return null;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || /\.(localhost|local|internal|lan|home|corp)$/.test(host) || (!host.includes('.') && !host.includes(':'))) {
    return `${host} is a local name; private networks are not reachable through the proxy.`;
  }
  if (isPrivateAddress(host)) return `${host} is a private, local or reserved address; it is not reachable through the proxy.`;
  return null;
}

/** IPv4 (URL parsing already turns decimal, hex and octal forms into dotted quads) and IPv6. */
export function isPrivateAddress(host: string): boolean {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || (a === 198 && (b === 18 || b === 19)) || a >= 224;
  }
  if (!host.includes(':')) return false;
  if (host === '::' || host === '::1') return true;
  const mapped = /^::ffff:(.+)$/.exec(host);
  if (mapped) return mapped[1]!.includes('.') ? isPrivateAddress(mapped[1]!) : true;
  return /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || /^ff/.test(host);
}

async function readCapped(response: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { text: '', truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (size + value.byteLength > max) {
      chunks.push(value.subarray(0, max - size));
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { text: new TextDecoder().decode(bytes), truncated };
}

const SKIP = new Set(['script', 'style', 'noscript', 'svg', 'template', 'iframe', 'head', 'nav', 'footer']);
const BLOCK = new Set(['p', 'div', 'br', 'li', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'table', 'ul', 'ol', 'pre', 'blockquote']);

/** Readable text with the Workers' streaming HTML parser: headings, paragraphs, links as "text (url)". */
export async function htmlToText(html: string): Promise<{ title: string; text: string }> {
  let title = '';
  let text = '';
  let skip = 0;
  let inTitle = false;
  const rewriter = new HTMLRewriter()
    .on('title', {
      element(el) {
        inTitle = true;
        el.onEndTag(() => void (inTitle = false));
      },
      text(chunk) {
        title += chunk.text;
      },
    })
    .on('*', {
      element(el) {
        const tag = el.tagName.toLowerCase();
        if (SKIP.has(tag)) {
          skip++;
          el.onEndTag(() => void skip--);
          return;
        }
        if (BLOCK.has(tag)) {
          text += tag === 'li' ? '\n- ' : '\n';
          // A block also ends its line (br is void: it has no end tag).
          if (tag !== 'br' && tag !== 'li') el.onEndTag(() => void (text += '\n'));
        }
        if (tag.startsWith('h') && tag.length === 2) text += '#'.repeat(Number(tag[1])) + ' ';
        const href = tag === 'a' ? el.getAttribute('href') : null;
        if (href && /^https?:/i.test(href)) el.onEndTag(() => void (text += ` (${href})`));
      },
    })
    .onDocument({
      text(chunk) {
        if (skip === 0 && !inTitle) text += chunk.text;
      },
    });
  await rewriter.transform(new Response(html)).text();
  return { title: decodeEntities(title).trim(), text: decodeEntities(text).replace(/[ \t]+/g, ' ').replace(/ *\n */g, '\n').replace(/\n{3,}/g, '\n\n').trim() };
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', euro: '€', copy: '©', mdash: '—', ndash: '–', hellip: '…' };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : whole;
    }
    return NAMED[code.toLowerCase()] ?? whole;
  });
}
