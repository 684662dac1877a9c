// CORS for the browser app: preflight answers, and which response headers page scripts may read.
// Which origins are allowed is decided in index.ts, before any route runs.
import { isPassThroughResponseHeader } from './headers.ts';

/**
 * The request headers @anthropic-ai/sdk 1.12 may send from a browser. Listed rather than reflected
 * so the preflight states exactly what the proxy accepts; `test/sdk.test.ts` checks this list
 * against the headers the installed SDK really sends. Accepting a header here does not forward it:
 * only `FORWARDED_REQUEST_HEADERS` reach the upstream.
 */
export const ALLOWED_REQUEST_HEADERS: readonly string[] = [
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  'authorization',
  'x-api-key',
  // Firefox lets scripts set User-Agent, so the SDK's value shows up in its preflights.
  'user-agent',
  'x-stainless-arch',
  'x-stainless-helper',
  'x-stainless-helper-method',
  'x-stainless-lang',
  'x-stainless-os',
  'x-stainless-package-version',
  'x-stainless-retry-count',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-timeout',
  // /v1/mcp: the remote server's address and headers, and the MCP transport's own.
  'x-mcp-url',
  'x-mcp-headers',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
];

// Chromium caps preflight caching at two hours; asking for more buys nothing.
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

export function preflightResponse(origin: string, methods: readonly string[]): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': methods.join(', '),
      'access-control-allow-headers': ALLOWED_REQUEST_HEADERS.join(', '),
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
    },
  });
}

/**
 * Lets an allowed origin read `response`, including the passed-through headers the SDK uses
 * (request-id, retry-after, x-should-retry, rate limits) and why the resolver refused a name. `response` must have mutable headers,
 * i.e. be built by this Worker, not returned by `fetch`.
 */
export function withCors(response: Response, origin: string): Response {
  const exposed = [...response.headers.keys()].filter(
    (name) => (name !== 'content-type' && isPassThroughResponseHeader(name)) || name === 'x-stackdocs-refused' || name === 'mcp-session-id' || name === 'mcp-protocol-version',
  );
  response.headers.set('access-control-allow-origin', origin);
  if (exposed.length > 0) response.headers.set('access-control-expose-headers', exposed.join(', '));
  return response;
}
