// POST /v1/messages: relays a Messages API call with the Worker's key. The response body is handed
// back as the upstream's stream, so SSE events reach the browser as they arrive.
import { anthropicKey, DEFAULT_ANTHROPIC_UPSTREAM, type Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { passThroughResponseHeaders, upstreamRequestHeaders } from './headers.ts';

export const NOT_CONFIGURED_MESSAGE =
  'This proxy has no Anthropic API key. When deployed, set one with ' +
  '`npx wrangler secret put ANTHROPIC_API_KEY`; when running locally, set ANTHROPIC_API_KEY in ' +
  'the environment of `npm start` (or `node cloudflare-proxy/local.mjs`).';

export const UPSTREAM_UNREACHABLE_MESSAGE =
  'The proxy could not reach the Anthropic API. Check the network, then try again.';

export async function forwardMessages(request: Request, env: Env): Promise<Response> {
  const apiKey = anthropicKey(env);
  if (apiKey === null) {
    // Retrying cannot help until someone sets the key, so tell the SDK not to.
    return errorResponse(503, 'proxy_not_configured', NOT_CONFIGURED_MESSAGE, { 'x-should-retry': 'false' });
  }

  const base = (env.ANTHROPIC_UPSTREAM || DEFAULT_ANTHROPIC_UPSTREAM).replace(/\/+$/, '');
  const url = `${base}/v1/messages${new URL(request.url).search}`;

  let upstream: Response;
  try {
    upstream = await fetch(url, {
      method: 'POST',
      headers: upstreamRequestHeaders(request.headers, apiKey),
      body: request.body,
      // The API never redirects; following one would send the key somewhere unplanned.
      redirect: 'manual',
    });
  } catch {
    // The thrown error can name hosts and sockets; the client gets a fixed message instead.
    return errorResponse(502, 'proxy_upstream_unreachable', UPSTREAM_UNREACHABLE_MESSAGE);
  }

  return new Response(upstream.body, {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: passThroughResponseHeaders(upstream.headers),
  });
}
