// POST /v1/ocr: relays a Mistral OCR call with the Worker's Mistral key. The body is read whole
// (and capped) before anything goes upstream, so an oversized request never costs an API call.
import { DEFAULT_MISTRAL_UPSTREAM, mistralKey, type Env } from './env.ts';
import { readCapped } from './body.ts';
import { errorResponse } from './errors.ts';

/** A 25 MB upload is about 33.4 MB once base64-encoded into the JSON body; this leaves room. */
export const MAX_OCR_REQUEST_BYTES = 40 * 1024 * 1024;

export const OCR_NOT_CONFIGURED_MESSAGE =
  'This proxy has no Mistral API key, so it cannot read scans with Mistral OCR. When deployed, ' +
  'set one with `npx wrangler secret put MISTRAL_API_KEY`; when running locally, set ' +
  'MISTRAL_API_KEY in the environment of the local proxy (`node cloudflare-proxy/local.mjs`). ' +
  'Until then, choose "in this browser" for scans in Settings.';

export const OCR_UPSTREAM_UNREACHABLE_MESSAGE =
  'The proxy could not reach the Mistral API. Check the network, then try again.';

const LIMIT_MB = MAX_OCR_REQUEST_BYTES / (1024 * 1024);

/** Response headers worth keeping: the body's type and Mistral's retry hint. */
const PASS_THROUGH = ['content-type', 'retry-after'];

export async function forwardOcr(request: Request, env: Env): Promise<Response> {
  const apiKey = mistralKey(env);
  if (apiKey === null) {
    await request.body?.cancel();
    return errorResponse(503, 'proxy_not_configured', OCR_NOT_CONFIGURED_MESSAGE, { 'x-should-retry': 'false' });
  }

  const declared = Number(request.headers.get('content-length'));
  if (declared > MAX_OCR_REQUEST_BYTES) {
    await request.body?.cancel();
    return tooLarge(`The OCR request is ${(declared / (1024 * 1024)).toFixed(1)} MB`);
  }
  // content-length may be absent (chunked) or wrong, so the bytes themselves are counted too.
  const body = await readCapped(request.body, MAX_OCR_REQUEST_BYTES);
  if (body === null) return tooLarge(`The OCR request is over ${LIMIT_MB} MB`);

  const base = (env.MISTRAL_UPSTREAM || DEFAULT_MISTRAL_UPSTREAM).replace(/\/+$/, '');
  let upstream: Response;
  try {
    upstream = await fetch(`${base}/v1/ocr`, {
      method: 'POST',
      // Fixed headers: nothing of the caller's (cookies, its own authorization) goes upstream.
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${apiKey}` },
      body,
      // The API never redirects; following one would send the key somewhere unplanned.
      redirect: 'manual',
    });
  } catch {
    // The thrown error can name hosts and sockets; the client gets a fixed message instead.
    return errorResponse(502, 'proxy_upstream_unreachable', OCR_UPSTREAM_UNREACHABLE_MESSAGE);
  }

  const headers = new Headers({ 'cache-control': 'no-store' });
  for (const name of PASS_THROUGH) {
    const value = upstream.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return new Response(upstream.body, { status: upstream.status, statusText: upstream.statusText, headers });
}

function tooLarge(what: string): Response {
  const message = `${what}; this proxy accepts OCR requests up to ${LIMIT_MB} MB. Send a smaller document, or read it in the browser.`;
  return errorResponse(413, 'request_too_large', message);
}
