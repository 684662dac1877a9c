// One POST to a route of the Stackdocs proxy on behalf of a tool (web_fetch, web_search): the
// endpoint read on every call (settings change while the stack runs), a time limit, and every
// failure turned into a message written for the model, with what it can do about it.
import { z } from 'zod';

const proxyErrorSchema = z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) });

export interface ProxyRoute<T> {
  /** The tool's name, as the model knows it. */
  tool: string;
  /** e.g. '/v1/fetch'. */
  path: string;
  /** What a success is, for the message when the answer is something else ("a page"). */
  what: string;
  schema: z.ZodType<T>;
  timeoutMs: number;
  /** What the model can do about each refusal, after the proxy's own message. */
  hints: Record<string, string>;
  needsProxyMessage: string;
  offlineMessage: string;
}

/** How the stack reaches the proxy: its base URL (null when it is not the provider) and fetch. */
export interface ProxyAccess {
  endpoint: string | (() => string | null);
  fetch: typeof fetch;
  /** Tells "offline" apart from "proxy down" (navigator.onLine by default). */
  isOnline?: () => boolean;
}

/** Hints every route shares: the proxy's own refusals of the app. */
function commonHints(path: string, tool: string): Record<string, string> {
  return {
    origin_not_allowed: "The proxy does not accept requests from this app's address: the app's origin must be added to the proxy's ALLOWED_ORIGINS.",
    not_found: `This proxy has no ${path} route: it is an older version and must be updated before ${tool} can work.`,
    method_not_allowed: `This proxy does not accept POST ${path}: it is an older version and must be updated before ${tool} can work.`,
  };
}

/** Posts `body` as JSON; resolves with the parsed answer, rejects with a message for the model. */
export async function callProxy<T>(route: ProxyRoute<T>, access: ProxyAccess, body: unknown, signal: AbortSignal): Promise<T> {
  const endpoint = typeof access.endpoint === 'string' ? access.endpoint : access.endpoint();
  const base = endpoint?.replace(/\/+$/, '');
  if (!base) throw new Error(route.needsProxyMessage);
  const isOnline = access.isOnline ?? (() => globalThis.navigator?.onLine !== false);
  const timeout = AbortSignal.timeout(route.timeoutMs);
  let response: Response;
  try {
    response = await access.fetch(`${base}${route.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      signal: AbortSignal.any([signal, timeout]),
    });
  } catch (error) {
    if (signal.aborted) throw error;
    if (timeout.aborted) throw new Error(`The Stackdocs proxy at ${base} did not answer within ${route.timeoutMs / 1000} s.`);
    if (!isOnline()) throw new Error(route.offlineMessage);
    throw new Error(
      `${route.tool} could not reach the Stackdocs proxy at ${base}: it may not be running (locally it starts with \`npm start\`), or the network may be down.`,
    );
  }
  const answer: unknown = await response.json().catch(() => null);
  if (response.ok) {
    const parsed = route.schema.safeParse(answer);
    if (parsed.success) return parsed.data;
    throw new Error(`${base} answered ${route.path} with something other than ${route.what}; check that the endpoint in Settings is a Stackdocs proxy.`);
  }
  const refusal = proxyErrorSchema.safeParse(answer);
  if (!refusal.success) throw new Error(`The Stackdocs proxy at ${base} answered ${response.status} without saying why.`);
  const { type, message } = refusal.data.error;
  const hint = route.hints[type] ?? commonHints(route.path, route.tool)[type];
  return Promise.reject(new Error(hint ? `${message} ${hint}` : message));
}
