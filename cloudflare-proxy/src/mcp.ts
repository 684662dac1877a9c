// GET/POST/DELETE /v1/mcp: a paired device's remote MCP server calls (Streamable HTTP), relayed to
// the server named in `x-mcp-url` when the owner allows its host (MCP_ALLOWED_HOSTS). The server's
// own headers (its API key) come JSON-encoded in `x-mcp-headers`, because `authorization` carries
// the device's token; nothing else of the caller's is forwarded. Answers stream back as they come
// (server-sent events included). Redirects are not followed; private addresses are refused unless
// the owner listed that exact host:port; a name is sent to the address it was checked at.
import { refuseUrl } from './address.ts';
import { MAX_MESSAGES_REQUEST_BYTES, readBody } from './body.ts';
import type { Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { hostAllowed } from './net.ts';
import { fetchChecked } from './pinned-http.ts';

/** The MCP transport's own headers, forwarded both ways. */
const MCP_REQUEST_HEADERS = ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'] as const;
export const MCP_RESPONSE_HEADERS = ['content-type', 'mcp-session-id', 'mcp-protocol-version'] as const;
/** Headers a server entry may not set: the proxy's and the connection's own. */
const RESERVED = new Set(['host', 'cookie', 'connection', 'content-length', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-authorization', 'x-mcp-url', 'x-mcp-headers']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const DEFAULT_TIMEOUT_MS = 30_000;

/** The owner's list: host names (`*.example.com` for any under it) or exact `host:port`. */
export function mcpHosts(env: Env): string[] {
  return (env.MCP_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

export async function forwardMcp(request: Request, env: Env): Promise<Response> {
  const raw = request.headers.get('x-mcp-url');
  let target: URL;
  try {
    target = new URL(raw ?? '');
  } catch {
    await request.body?.cancel();
    return errorResponse(400, 'invalid_url', raw ? `"${raw.slice(0, 200)}" is not a URL.` : 'Name the MCP server in the x-mcp-url header.');
  }
  const listed = mcpHosts(env);
  const exact = new Set(listed.filter((entry) => entry.includes(':')));
  if (!listed.length || !(exact.has(target.host) || hostAllowed(target.hostname, listed))) {
    await request.body?.cancel();
    const why = listed.length ? `${target.host} is not one of the MCP servers this proxy's owner allows` : "this proxy's owner allows no remote MCP servers";
    return errorResponse(403, 'blocked_address', `${why} (MCP_ALLOWED_HOSTS on the proxy).`);
  }
  const refusal = refuseUrl(target, exact);
  if (refusal) {
    await request.body?.cancel();
    return errorResponse(refusal.type === 'blocked_address' ? 403 : 400, refusal.type, refusal.message);
  }

  const headers = new Headers();
  for (const name of MCP_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  const own = request.headers.get('x-mcp-headers');
  if (own) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(own);
    } catch {
      parsed = null;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      await request.body?.cancel();
      return errorResponse(400, 'invalid_request', 'x-mcp-headers must be a JSON object of header names and values.');
    }
    for (const [name, value] of Object.entries(parsed)) {
      if (!TOKEN.test(name) || typeof value !== 'string' || RESERVED.has(name.toLowerCase())) {
        await request.body?.cancel();
        return errorResponse(400, 'invalid_request', `The MCP server header "${name.slice(0, 60)}" cannot be sent.`);
      }
      headers.set(name, value);
    }
  }

  let body: Uint8Array<ArrayBuffer> | undefined;
  if (request.method === 'POST') {
    const read = await readBody(request, MAX_MESSAGES_REQUEST_BYTES, 'The MCP request');
    if (read instanceof Response) return read;
    body = read;
  }
  const timeoutMs = Number(env.MCP_TIMEOUT_MS) > 0 ? Number(env.MCP_TIMEOUT_MS) : DEFAULT_TIMEOUT_MS;
  // The time limit is for the server to start answering; an event stream may then run on.
  const started = new AbortController();
  const timer = setTimeout(() => started.abort(), timeoutMs);
  let upstream: Response;
  try {
    if (exact.has(target.host) || /^[\d.]+$|^\[/.test(target.hostname)) {
      // The owner's own host:port, or an address as written (checked above): no name to look up.
      upstream = await fetch(target.href, { method: request.method, headers, ...(body ? { body } : {}), redirect: 'manual', signal: started.signal });
    } else {
      // Judged on every address the name resolves to, and sent to the address judged.
      const answer = await fetchChecked(env, target, { method: request.method, headers, ...(body ? { body } : {}), signal: started.signal });
      if (!(answer instanceof Response)) return errorResponse(answer.blocked ? 403 : 502, answer.blocked ? 'blocked_address' : 'upstream_unreachable', answer.message.replace('never fetches', 'never forwards to'));
      upstream = answer;
    }
  } catch (error) {
    if (started.signal.aborted) return errorResponse(504, 'upstream_timeout', `The MCP server at ${target.host} did not answer within ${timeoutMs / 1000} s.`);
    return errorResponse(502, 'upstream_unreachable', `The MCP server at ${target.host} could not be reached (${(error as Error).message}).`);
  } finally {
    clearTimeout(timer);
  }
  if (upstream.status >= 300 && upstream.status < 400) {
    await upstream.body?.cancel();
    return errorResponse(502, 'upstream_error', `The MCP server at ${target.host} redirected (HTTP ${upstream.status}); the proxy does not follow MCP redirects.`);
  }
  const out = new Headers({ 'cache-control': 'no-store' });
  for (const name of MCP_RESPONSE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) out.set(name, value);
  }
  return new Response(upstream.body, { status: upstream.status, headers: out });
}
