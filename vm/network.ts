// Where the computer's network goes (`VmNetwork`), why a lookup failed (`DnsNotice`), and the DNS
// messages the host answers the guest with itself (dns-bridge.ts, offline-network.ts).

/** Where the computer's network goes, from the stack worker (absent: the computer is offline). */
export interface VmNetwork {
  /** The relay: ws(s)://proxy/v1/wisp?ticket=… */
  relayUrl: string;
  /** The resolver: http(s)://proxy/dns-query */
  dnsUrl: string;
  /** The network ticket, sent to the resolver as a bearer token. */
  ticket: string;
}

/** Why a lookup failed, as the guest's user should hear it. */
export type DnsNotice = { name: string; reason: string };

/** The query turned into a REFUSED reply with no answers (RFC 1035 header: QR, RA, RCODE 5). */
export function refused(query: Uint8Array): Uint8Array<ArrayBuffer> {
  const reply = new Uint8Array(query.length >= 12 ? query : new Uint8Array(12));
  const view = new DataView(reply.buffer);
  view.setUint16(2, 0x8000 | 0x0080 | (view.getUint16(2) & 0x0100) | 5);
  view.setUint16(6, 0);
  view.setUint16(8, 0);
  view.setUint16(10, 0);
  // Keep only the question: drop anything after it (an EDNS record the query carried).
  const end = questionEnd(reply);
  return end === null ? reply : reply.slice(0, end);
}

function questionEnd(message: Uint8Array): number | null {
  let at = 12;
  while (at < message.length && message[at] !== 0) {
    if ((message[at]! & 0xc0) !== 0) return null;
    at += 1 + message[at]!;
  }
  return at + 5 <= message.length ? at + 5 : null;
}

export function questionName(message: Uint8Array): string | null {
  const labels: string[] = [];
  let at = 12;
  while (at < message.length && message[at] !== 0) {
    const length = message[at]!;
    if (length > 63 || at + 1 + length > message.length) return null;
    labels.push(new TextDecoder().decode(message.subarray(at + 1, at + 1 + length)));
    at += 1 + length;
  }
  return labels.length ? labels.join('.') : null;
}
