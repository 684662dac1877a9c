// The page's side of the workers' policy: it names the model endpoint its stack uses to the
// service worker, which serves the policy with every worker's script. A worker keeps the policy it
// started with, so one started under a policy without the endpoint must start again to reach it.
import type { AllowEndpointAnswer, AllowEndpointMessage } from './sw-policy.ts';

/**
 * Whether this page's workers came from the service worker (with its policy). A page it did not
 * control (the first visit, before it took over) started its stack worker with whatever the host
 * sent: see `hostSendsPolicy`.
 */
export const WORKERS_FROM_SERVICE_WORKER = typeof navigator !== 'undefined' && 'serviceWorker' in navigator && navigator.serviceWorker.controller !== null;

/**
 * Whether the host sends a policy header with the app's files (dist/_headers on Cloudflare Pages),
 * which the workers of a page the service worker did not serve run under. False when unknown.
 */
export async function hostSendsPolicy(fetcher: typeof fetch = fetch): Promise<boolean> {
  try {
    return (await fetcher(location.href, { method: 'HEAD', cache: 'no-store' })).headers.has('content-security-policy');
  } catch {
    return false;
  }
}

/** How long the service worker may take to answer before the page goes on without its answer. */
const ANSWER_MS = 10_000;

/**
 * Tells the service worker, once one is active (maybe only after the first visit registers it),
 * that the stack uses `endpoint`. Null with no service worker, or no answer in time. Never throws.
 */
export async function allowEndpoint(endpoint: string, container: ServiceWorkerContainer | null = globalThis.navigator?.serviceWorker ?? null): Promise<AllowEndpointAnswer | null> {
  if (!container) return null;
  try {
    const active = (await container.ready).active;
    if (!active) return null;
    const channel = new MessageChannel();
    const answered = new Promise<AllowEndpointAnswer | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), ANSWER_MS);
      channel.port1.onmessage = (event) => {
        clearTimeout(timer);
        resolve(event.data as AllowEndpointAnswer);
      };
    });
    const message: AllowEndpointMessage = { type: 'ALLOW_ENDPOINT', endpoint };
    active.postMessage(message, [channel.port2]);
    const answer = await answered;
    channel.port1.close();
    return answer;
  } catch (error) {
    console.warn('the service worker could not be told the model endpoint', error);
    return null;
  }
}

/**
 * Whether the stack must start again to reach its endpoint: the service worker just added it,
 * and this page's workers run under a policy without it (the one it served before, or the host's). Asked at most once per origin
 * and tab (`seen`), so a policy that still refuses it cannot reload the page in a loop.
 */
export function mustRestartFor(endpoint: string, answer: AllowEndpointAnswer | null, workersUnderPolicy: boolean, seen: Pick<Storage, 'getItem' | 'setItem'>): boolean {
  if (!answer?.ok || answer.result !== 'added' || !workersUnderPolicy) return false;
  const key = `stackdocs:policy-restart:${new URL(endpoint).origin}`;
  if (seen.getItem(key) !== null) return false;
  seen.setItem(key, '1');
  return true;
}
