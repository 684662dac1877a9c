// Which headers cross the proxy in each direction. Allow-lists, so a header added by a client or by
// the upstream never leaks across by default.

/**
 * The only client request headers sent upstream. Everything else is dropped, notably
 * `authorization` (which @anthropic-ai/sdk 1.x uses for keys), any client `x-api-key`, and cookies.
 */
export const FORWARDED_REQUEST_HEADERS: readonly string[] = [
  'content-type',
  'accept',
  'anthropic-version',
  'anthropic-beta',
];

const PASS_THROUGH_RESPONSE_HEADERS = new Set([
  'content-type',
  'request-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
]);

/** True for the upstream response headers the SDK reads: ids, retry hints and rate limits. */
export function isPassThroughResponseHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return PASS_THROUGH_RESPONSE_HEADERS.has(lower) || lower.startsWith('anthropic-ratelimit-');
}

export function upstreamRequestHeaders(incoming: Headers, apiKey: string): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = incoming.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set('x-api-key', apiKey);
  return headers;
}

/**
 * The `anthropic-beta` values the owner allows (ANTHROPIC_BETA_ALLOWED, comma-separated; none by
 * default): a beta can turn on features billed to the key's owner, so a device may not pick them.
 */
export function allowedBetas(setting: string | undefined): string[] {
  return (setting ?? '').split(',').map((beta) => beta.trim().toLowerCase()).filter(Boolean);
}

/** The values of an `anthropic-beta` header that are not on the owner's list (empty: all allowed or none sent). */
export function betasNotAllowed(header: string | null, allowed: readonly string[]): string[] {
  if (header === null) return [];
  return header.split(',').map((beta) => beta.trim()).filter((beta) => beta !== '' && !allowed.includes(beta.toLowerCase()));
}

export function passThroughResponseHeaders(upstream: Headers): Headers {
  const headers = new Headers();
  for (const [name, value] of upstream) {
    if (isPassThroughResponseHeader(name)) headers.set(name, value);
  }
  return headers;
}
