// The service worker's side of the Content-Security-Policy: the model endpoints the user chose in
// this browser, kept in Cache Storage (a service worker forgets its globals when it sleeps), and
// the policy with them as a header on the page and on every worker script it serves. A worker's
// policy is the one its script came with, for its whole life: the <meta> tag never reaches one.
import type { WorkboxPlugin } from 'workbox-core';
import { connectSources, contentSecurityPolicy } from './content-security-policy.ts';

/** Kept apart from workbox's caches, so a new version of the app keeps the user's choices. */
export const POLICY_CACHE = 'stackdocs-policy';
/** The most endpoints kept; the oldest choice goes first. */
export const MAX_CHOSEN_ENDPOINTS = 16;

/** What the page sends to have an endpoint allowed (answered on the message's port). */
export interface AllowEndpointMessage {
  type: 'ALLOW_ENDPOINT';
  endpoint: string;
}
/** `added`: workers started before now cannot reach it; `known`: they could already. */
export type AllowEndpointAnswer = { ok: true; result: 'added' | 'known' } | { ok: false; message: string };

export interface EndpointPolicy {
  /** Adds the endpoint's origin; never throws (a refusal is an answer). */
  allow(endpoint: string): Promise<AllowEndpointAnswer>;
  /** The policy to send now, as a header. */
  header(): Promise<string>;
  /** Adds the header to the page and worker scripts a workbox strategy answers with. */
  plugin: WorkboxPlugin;
}

/**
 * `builtIn`: the endpoints the build allows with no choice made. `scope`: the service worker's
 * scope, under which the choices are kept as one JSON entry.
 */
export function createEndpointPolicy({ caches, scope, builtIn }: { caches: CacheStorage; scope: string; builtIn: readonly string[] }): EndpointPolicy {
  const key = new URL('policy/chosen-endpoints.json', scope).href;
  let chosen: Promise<string[]> | null = null;

  const read = async (): Promise<string[]> => {
    try {
      const stored = await (await (await caches.open(POLICY_CACHE)).match(key))?.json();
      return Array.isArray(stored) ? stored.filter((entry): entry is string => typeof entry === 'string' && connectSources(entry).length > 0) : [];
    } catch {
      // An unreadable entry allows nothing more than the build does.
      return [];
    }
  };
  const current = () => (chosen ??= read());
  const knows = (origin: string, list: readonly string[]) => [...builtIn, ...list].some((entry) => connectSources(entry)[0] === origin);

  async function allow(endpoint: string): Promise<AllowEndpointAnswer> {
    const origin = connectSources(endpoint)[0];
    if (!origin) return { ok: false, message: `A model endpoint is an http:// or https:// address, not ${JSON.stringify(endpoint)}.` };
    const list = await current();
    if (knows(origin, list)) return { ok: true, result: 'known' };
    const next = [...list, origin].slice(-MAX_CHOSEN_ENDPOINTS);
    chosen = Promise.resolve(next);
    try {
      await (await caches.open(POLICY_CACHE)).put(key, new Response(JSON.stringify(next), { headers: { 'content-type': 'application/json' } }));
    } catch (error) {
      // Allowed until this service worker sleeps; its next start reads the older list.
      console.warn('the chosen model endpoint could not be kept', error);
    }
    return { ok: true, result: 'added' };
  }

  const header = async () => contentSecurityPolicy({ endpoints: [...builtIn, ...(await current())], header: true });

  const plugin: WorkboxPlugin = {
    async handlerWillRespond({ request, response }) {
      if (!needsPolicy(request, response)) return response;
      const headers = new Headers(response.headers);
      headers.set('content-security-policy', await header());
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    },
  };
  return { allow, header, plugin };
}

/**
 * A page or a worker's script: by what was asked for, or (a navigation answered with the
 * precached index.html, whose request workbox makes anew) by what came back.
 */
function needsPolicy(request: Request, response: Response): boolean {
  if (response.type !== 'basic' && response.type !== 'default') return false;
  if (['document', 'worker', 'sharedworker'].includes(request.destination)) return true;
  return /^(text\/html|text\/javascript|application\/javascript)\b/.test(response.headers.get('content-type') ?? '');
}
