// The Stackdocs proxy Worker: holds API keys so the browser never does, and relays model calls
// for the devices its owner paired. Every route but /health and pairing needs a device token;
// the routes that manage devices need the owner's token. Origins are checked first, as a second layer.
import { forwardMessages } from './anthropic.ts';
import { MAX_MESSAGES_REQUEST_BYTES, readBody } from './body.ts';
import { preflightResponse, withCors } from './cors.ts';
import type { Authorised } from './device-types.ts';
import { allowedOrigins, anthropicKey, devices, mistralKey, type Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { clientAddress, failureGate, noteFailure } from './failures.ts';
import { fetchPage } from './fetch.ts';
import { forwardMcp } from './mcp.ts';
import { forwardOcr } from './mistral.ts';
import { dnsQuery, netHosts, netPorts, netTicket, wispRelay } from './net.ts';
import { bearer, createPairingCode, limitDevice, listDevices, ownerRefusal, pairDevice, pairLocalDevice, refusalResponse, revokeDevice } from './pairing.ts';
import { search } from './search.ts';

export type { Env } from './env.ts';
export { Devices } from './devices.ts';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface Call {
  request: Request;
  env: Env;
  ctx: ExecutionContext;
  /** The paired device making a `device` call. */
  device: Authorised;
  /** The `:id` of a route with one. */
  id: string;
}

interface Route {
  path: string | RegExp;
  /** Who may call it: anyone, a paired device, or the owner. */
  access: 'public' | 'device' | 'owner';
  handlers: Partial<Record<Method, (call: Call) => Promise<Response> | Response>>;
}

const ROUTES: Route[] = [
  { path: '/health', access: 'public', handlers: { GET: ({ env }) => health(env) } },
  { path: '/v1/pair', access: 'public', handlers: { POST: ({ request, env }) => pairDevice(request, env) } },
  { path: '/v1/pair/local', access: 'public', handlers: { POST: ({ request, env }) => pairLocalDevice(request, env) } },
  { path: '/v1/device', access: 'device', handlers: { GET: ({ env, device }) => deviceStatus(env, device) } },
  { path: '/v1/messages', access: 'device', handlers: { POST: messages } },
  { path: '/v1/fetch', access: 'device', handlers: { POST: ({ request, env }) => fetchPage(request, env) } },
  { path: '/v1/search', access: 'device', handlers: { POST: ({ request, env }) => search(request, env) } },
  { path: '/v1/ocr', access: 'device', handlers: { POST: ({ request, env }) => forwardOcr(request, env) } },
  // A remote MCP server's Streamable HTTP, to the hosts the owner allows (MCP_ALLOWED_HOSTS).
  { path: '/v1/mcp', access: 'device', handlers: { GET: ({ request, env }) => forwardMcp(request, env), POST: ({ request, env }) => forwardMcp(request, env), DELETE: ({ request, env }) => forwardMcp(request, env) } },
  { path: '/v1/net/ticket', access: 'device', handlers: { POST: ({ env, device }) => netTicket(env, device.device.id) } },
  // The computer's network: a ticket (not the device token) authorises these, as the VM uses them.
  { path: '/v1/wisp', access: 'public', handlers: { GET: ({ request, env }) => wispRelay(request, env) } },
  { path: '/dns-query', access: 'public', handlers: { GET: ({ request, env }) => dnsQuery(request, env), POST: ({ request, env }) => dnsQuery(request, env) } },
  { path: '/v1/owner/pairing-codes', access: 'owner', handlers: { POST: ({ request, env }) => createPairingCode(request, env) } },
  { path: '/v1/owner/devices', access: 'owner', handlers: { GET: ({ request, env }) => listDevices(request, env) } },
  {
    path: /^\/v1\/owner\/devices\/(dev_[\w-]{1,40})$/,
    access: 'owner',
    handlers: { DELETE: ({ request, env, id }) => revokeDevice(request, env, id), PATCH: ({ request, env, id }) => limitDevice(request, env, id) },
  },
];

function health(env: Env): Response {
  // Says whether each key is set, never which; pairing is how a device learns if it may use them.
  return Response.json(
    { ok: true, anthropic: anthropicKey(env) !== null, mistral: mistralKey(env) !== null, pairing: env.LOCAL_PAIRING === '1' ? 'local' : 'code' },
    { headers: { 'cache-control': 'no-store' } },
  );
}

/** GET /v1/device: this device, its limits, and where the proxy lets its computer's network go. */
function deviceStatus(env: Env, device: Authorised): Response {
  return Response.json(
    { device: device.device, limits: device.limits, network: { hosts: netHosts(env), ports: netPorts(env) } },
    { headers: { 'cache-control': 'no-store' } },
  );
}

async function messages({ request, env, ctx, device }: Call): Promise<Response> {
  const body = await readBody(request, MAX_MESSAGES_REQUEST_BYTES, 'The model request');
  if (body instanceof Response) return body;
  let recorded: Promise<void> = Promise.resolve();
  return forwardMessages(
    request,
    env,
    body,
    // A streamed reply reports in parts: every part is awaited.
    (tokens) => void (recorded = Promise.all([recorded, devices(env).recordUsage(device.device.id, tokens)]).then(() => {})),
    (counting) => ctx.waitUntil(counting.then(() => recorded)),
  );
}

function find(pathname: string): { route: Route; id: string } | null {
  for (const route of ROUTES) {
    if (typeof route.path === 'string') {
      if (route.path === pathname) return { route, id: '' };
    } else {
      const match = route.path.exec(pathname);
      if (match) return { route, id: match[1]! };
    }
  }
  return null;
}

async function route(request: Request, env: Env, ctx: ExecutionContext, origin: string | null): Promise<Response> {
  const { pathname } = new URL(request.url);
  const found = find(pathname);
  if (found === null) {
    const message = `No route ${pathname}. This proxy serves POST /v1/messages, POST /v1/fetch, POST /v1/search, POST /v1/ocr, /v1/mcp, GET /v1/device, POST /v1/pair and GET /health (and the owner's /v1/owner/...).`;
    return errorResponse(404, 'not_found', message);
  }
  const { route, id } = found;
  const methods = [...Object.keys(route.handlers), 'OPTIONS'];
  if (request.method === 'OPTIONS') {
    // Without an Origin this is not a CORS preflight, just a question about the route.
    return origin === null ? new Response(null, { status: 204, headers: { allow: methods.join(', ') } }) : preflightResponse(origin, methods);
  }
  const handler = route.handlers[request.method as Method];
  if (!handler) {
    const message = `${request.method} is not allowed on ${pathname}; use ${methods.filter((m) => m !== 'OPTIONS').join(' or ')}.`;
    return errorResponse(405, 'method_not_allowed', message, { allow: methods.join(', ') });
  }
  if (route.access === 'owner') {
    const refused = await ownerRefusal(request, env);
    if (refused) {
      await request.body?.cancel();
      return refused;
    }
  }
  let device: Authorised | undefined;
  if (route.access === 'device') {
    // An address sending wrong tokens is refused here, before the devices' one Durable Object.
    const address = clientAddress(request);
    const gated = failureGate(address);
    if (gated) {
      await request.body?.cancel();
      return gated;
    }
    // Checked and counted before the body is read: a refused request costs nothing upstream.
    // The device's own status is free: a device over its limits can still learn that it is.
    const result = await devices(env).authorise(bearer(request), pathname !== '/v1/device');
    if (!result.ok) {
      if (result.status === 401) noteFailure(address);
      await request.body?.cancel();
      return refusalResponse(result);
    }
    device = result;
  }
  return handler({ request, env, ctx, device: device!, id });
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const origin = request.headers.get('origin');
    // A second layer: a browser page from another origin is refused whatever it carries.
    if (origin !== null && !allowedOrigins(env).includes(origin)) {
      const message = `Origin ${origin} may not use this proxy. Add it to ALLOWED_ORIGINS.`;
      return errorResponse(403, 'origin_not_allowed', message);
    }
    let response: Response;
    try {
      response = await route(request, env, ctx, origin);
    } catch {
      // A boundary: whatever went wrong becomes an error body, never a stack trace with bindings.
      response = errorResponse(500, 'proxy_internal_error', 'The proxy failed while handling this request.');
    }
    response.headers.append('vary', 'Origin');
    return origin === null ? response : withCors(response, origin);
  },
} satisfies ExportedHandler<Env>;
