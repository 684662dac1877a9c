// The Stackdocs proxy Worker: holds API keys so the browser never does, and relays model calls.
import { forwardMessages } from './anthropic.ts';
import { fetchPage } from './fetch.ts';
import { forwardOcr } from './mistral.ts';
import { preflightResponse, withCors } from './cors.ts';
import { allowedOrigins, anthropicKey, mistralKey, type Env } from './env.ts';
import { errorResponse } from './errors.ts';

export type { Env } from './env.ts';

interface Route {
  method: 'GET' | 'POST';
  handle(request: Request, env: Env): Promise<Response> | Response;
}

const ROUTES = new Map<string, Route>([
  ['/v1/messages', { method: 'POST', handle: forwardMessages }],
  ['/health', { method: 'GET', handle: health }],
  ['/v1/fetch', { method: 'POST', handle: fetchPage }],
  ['/v1/ocr', { method: 'POST', handle: forwardOcr }],
]);

function health(_request: Request, env: Env): Response {
  // Says whether each key is set, never which.
  return Response.json(
    { ok: true, anthropic: anthropicKey(env) !== null, mistral: mistralKey(env) !== null },
    { headers: { 'cache-control': 'no-store' } },
  );
}

async function route(request: Request, env: Env, origin: string | null): Promise<Response> {
  const { pathname } = new URL(request.url);
  const found = ROUTES.get(pathname);
  if (found === undefined) {
    const message = `No route ${pathname}. This proxy serves POST /v1/messages, POST /v1/fetch, POST /v1/ocr and GET /health.`;
    return errorResponse(404, 'not_found', message);
  }
  const methods = [found.method, 'OPTIONS'];
  if (request.method === 'OPTIONS') {
    // Without an Origin this is not a CORS preflight, just a question about the route.
    return origin === null
      ? new Response(null, { status: 204, headers: { allow: methods.join(', ') } })
      : preflightResponse(origin, methods);
  }
  if (request.method !== found.method) {
    const message = `${request.method} is not allowed on ${pathname}; use ${found.method}.`;
    return errorResponse(405, 'method_not_allowed', message, { allow: methods.join(', ') });
  }
  return found.handle(request, env);
}

export default {
  async fetch(request: Request, env: Env, _ctx: ExecutionContext): Promise<Response> {
    const origin = request.headers.get('origin');
    // Scripts and curl send no Origin and are let through; browsers always send one cross-origin.
    if (origin !== null && !allowedOrigins(env).includes(origin)) {
      const message = `Origin ${origin} may not use this proxy. Add it to ALLOWED_ORIGINS.`;
      return errorResponse(403, 'origin_not_allowed', message);
    }
    let response: Response;
    try {
      response = await route(request, env, origin);
    } catch {
      // A boundary: whatever went wrong becomes an error body, never a stack trace with bindings.
      response = errorResponse(500, 'proxy_internal_error', 'The proxy failed while handling this request.');
    }
    response.headers.append('vary', 'Origin');
    return origin === null ? response : withCors(response, origin);
  },
} satisfies ExportedHandler<Env>;
