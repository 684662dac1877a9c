// Wrong credentials (device tokens, pairing codes) counted per client address in this isolate:
// past a few a minute, an address is refused here, before the Devices Durable Object, so a flood
// from one address costs that one object (which every paired device's request goes through)
// nothing, and cannot slow the devices that are paired. The Durable Object keeps its own count
// of wrong pairing codes per address and overall, which holds across isolates.
import { errorResponse } from './errors.ts';

const WINDOW_MS = 60_000;
/** Wrong credentials an address may send in a minute before this isolate stops asking. */
export const MAX_FAILURES_PER_MINUTE = 20;
/** Addresses remembered at once; the oldest are forgotten first. */
const MAX_ADDRESSES = 10_000;

const failures = new Map<string, { since: number; count: number }>();

/**
 * The address a request came from: Cloudflare's edge sets CF-Connecting-IP (a client's own value
 * is replaced); Miniflare sets it from the socket when the client sent none.
 */
export function clientAddress(request: Request): string {
  return request.headers.get('cf-connecting-ip')?.trim().toLowerCase() || 'unknown';
}

/** A 429 for an address over its wrong credentials this minute, or null. */
export function failureGate(address: string, now = Date.now()): Response | null {
  const entry = failures.get(address);
  if (!entry || now - entry.since >= WINDOW_MS || entry.count < MAX_FAILURES_PER_MINUTE) return null;
  const retry = Math.max(1, Math.ceil((entry.since + WINDOW_MS - now) / 1000));
  return errorResponse(
    429,
    'too_many_failures',
    `Too many requests with a wrong device token or pairing code came from this address in the last minute; it is refused for ${retry} s. Check the token or code, then try again.`,
    { 'retry-after': String(retry) },
  );
}

export function noteFailure(address: string, now = Date.now()): void {
  const entry = failures.get(address);
  if (entry && now - entry.since < WINDOW_MS) {
    entry.count++;
    return;
  }
  failures.delete(address);
  if (failures.size >= MAX_ADDRESSES) {
    for (const [key, value] of failures) {
      if (now - value.since >= WINDOW_MS || failures.size >= MAX_ADDRESSES) failures.delete(key);
      if (failures.size < MAX_ADDRESSES / 2) break;
    }
  }
  failures.set(address, { since: now, count: 1 });
}
