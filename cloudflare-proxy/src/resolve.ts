// Names to addresses, through DNS over HTTPS (DNS_UPSTREAM, default Cloudflare's): the one guard
// both web_fetch and the computer's network use to judge where a name really leads, not only how
// it is written.
import { blockedHostReason } from './address.ts';
import { answerAddresses, TYPE_A, type ARecord } from './dns.ts';
import type { Env } from './env.ts';

export const DEFAULT_DNS_UPSTREAM = 'https://cloudflare-dns.com/dns-query';

/** Sends a DNS query to the upstream resolver; null when it cannot be asked or answers nonsense. */
export async function askUpstream(env: Env, query: Uint8Array): Promise<Uint8Array | null> {
  try {
    const response = await fetch(env.DNS_UPSTREAM || DEFAULT_DNS_UPSTREAM, {
      method: 'POST',
      headers: { 'content-type': 'application/dns-message', accept: 'application/dns-message' },
      body: query,
      signal: AbortSignal.timeout(5_000),
    });
    if (!response.ok) return null;
    return new Uint8Array(await response.arrayBuffer());
  } catch {
    return null;
  }
}

/** The A records of `name`, or null when it could not be looked up. */
export async function resolveA(env: Env, name: string): Promise<ARecord[] | null> {
  const answer = await askUpstream(env, aQuery(name));
  return answer ? (answerAddresses(answer)?.records ?? null) : null;
}

/** The first private, local or reserved address `name` resolves to, or null (none, or no answer). */
export async function privateAddressOf(env: Env, name: string): Promise<string | null> {
  const records = await resolveA(env, name);
  return records?.find((record) => blockedHostReason(record.address) !== null)?.address ?? null;
}

/** An A query for `name`, recursion desired. */
export function aQuery(name: string): Uint8Array<ArrayBuffer> {
  const labels = name.replace(/\.+$/, '').split('.').map((label) => new TextEncoder().encode(label));
  const query = new Uint8Array(12 + labels.reduce((n, l) => n + 1 + l.length, 0) + 1 + 4);
  const view = new DataView(query.buffer);
  view.setUint16(0, Math.floor(Math.random() * 0xffff));
  view.setUint16(2, 0x0100);
  view.setUint16(4, 1);
  let at = 12;
  for (const label of labels) {
    query[at++] = label.length;
    query.set(label, at);
    at += label.length;
  }
  query[at++] = 0;
  view.setUint16(at, TYPE_A);
  view.setUint16(at + 2, 1);
  return query;
}
