// Names to addresses, through DNS over HTTPS (DNS_UPSTREAM, default Cloudflare's): the one guard
// web_fetch, remote MCP and the computer's network use to judge where a name really leads, not
// only how it is written.
import { blockedHostReason } from './address.ts';
import { answerAddresses, RCODE_NXDOMAIN, TYPE_A, TYPE_AAAA } from './dns.ts';
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

/** Why an address (as a resolver gives it: IPv6 without brackets) is not one to connect to, or null. */
export function addressBlockedReason(address: string): string | null {
  return blockedHostReason(address.includes(':') ? `[${address}]` : address);
}

/** A name refused: `blocked` when it leads somewhere private, else it could not be resolved. */
export type NameRefusal = { ok: false; blocked: boolean; message: string };

/**
 * Where `name` may be reached: every address it resolves to (A and AAAA, asked side by side), only
 * when all are public (`passes` lets the tests' own loopback servers through). Fails closed: a
 * lookup that fails or answers nonsense refuses the name, as does a name with no address.
 */
export async function checkName(env: Env, name: string, passes: (address: string) => boolean = () => false): Promise<{ ok: true; addresses: string[] } | NameRefusal> {
  const answers = await Promise.all([TYPE_A, TYPE_AAAA].map((type) => askUpstream(env, aQuery(name, type))));
  const parsed = answers.map((answer) => (answer ? answerAddresses(answer) : null));
  // NXDOMAIN (3) is an answer; SERVFAIL and the like are not.
  if (parsed.some((p) => p === null || (p.rcode !== 0 && p.rcode !== RCODE_NXDOMAIN))) {
    return { ok: false, blocked: false, message: `${name} could not be looked up, so where it leads cannot be checked; the proxy does not fetch names it cannot check. Try again later.` };
  }
  const addresses = [...new Set(parsed.flatMap((p) => p!.records.map((r) => r.address)))];
  if (addresses.length === 0) return { ok: false, blocked: false, message: `${name} does not resolve to any address.` };
  const hidden = addresses.find((address) => addressBlockedReason(address) !== null && !passes(address));
  if (hidden) return { ok: false, blocked: true, message: `${name} resolves to ${hidden}, a private, local or reserved address; the proxy never fetches those.` };
  return { ok: true, addresses };
}

/** An A (or `type`) query for `name`, recursion desired. */
export function aQuery(name: string, type = TYPE_A): Uint8Array<ArrayBuffer> {
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
  view.setUint16(at, type);
  view.setUint16(at + 2, 1);
  return query;
}
