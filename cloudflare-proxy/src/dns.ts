// The little of the DNS wire format (RFC 1035) the proxy's resolver needs: the question of a
// query, the A and AAAA records of an answer, and a refusal built from a query. Bounds-checked throughout:
// a malformed message is null, never an exception or an out-of-range read.

export interface DnsQuestion {
  id: number;
  /** Lower case, without the final dot. */
  name: string;
  type: number;
  /** Where the question section ends: what a reply copies. */
  end: number;
}

export const TYPE_A = 1;
export const TYPE_AAAA = 28;
export const RCODE_NXDOMAIN = 3;
export const RCODE_REFUSED = 5;

/** The one question of a query, or null when the message is not a single-question query. */
export function parseQuestion(message: Uint8Array): DnsQuestion | null {
  if (message.length < 12) return null;
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const flags = view.getUint16(2);
  if (flags & 0x8000) return null; // a response, not a query
  if (view.getUint16(4) !== 1) return null;
  const name = readName(message, 12);
  if (!name || name.next + 4 > message.length) return null;
  return { id: view.getUint16(0), name: name.name.toLowerCase(), type: view.getUint16(name.next), end: name.next + 4 };
}

export interface ARecord {
  /** Dotted IPv4, or IPv6 as eight hex groups (no brackets). */
  address: string;
  ttl: number;
}

/** The A and AAAA records of a response (any name: CNAME chains end in them), or null when malformed. */
export function answerAddresses(message: Uint8Array): { rcode: number; records: ARecord[] } | null {
  if (message.length < 12) return null;
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const rcode = view.getUint16(2) & 0xf;
  const questions = view.getUint16(4);
  const answers = view.getUint16(6);
  let at = 12;
  for (let i = 0; i < questions; i++) {
    const name = readName(message, at);
    if (!name) return null;
    at = name.next + 4;
  }
  const records: ARecord[] = [];
  for (let i = 0; i < answers; i++) {
    const name = readName(message, at);
    if (!name || name.next + 10 > message.length) return null;
    const type = view.getUint16(name.next);
    const ttl = view.getUint32(name.next + 4);
    const length = view.getUint16(name.next + 8);
    const data = name.next + 10;
    if (data + length > message.length) return null;
    if (type === TYPE_A && length === 4) records.push({ address: Array.from(message.subarray(data, data + 4)).join('.'), ttl });
    if (type === TYPE_AAAA && length === 16) {
      const groups = Array.from({ length: 8 }, (_, g) => view.getUint16(data + 2 * g).toString(16));
      records.push({ address: compressIpv6(groups), ttl });
    }
    at = data + length;
  }
  return { rcode, records };
}

/**
 * A reply to `query` with no answers and `rcode` (REFUSED, NXDOMAIN), carrying RFC 8914's
 * Extended DNS Error `code` with `text`, so a resolver that shows it (dig) says why.
 */
export function refusal(query: Uint8Array, question: DnsQuestion, rcode: number, extended: { code: number; text: string }): Uint8Array<ArrayBuffer> {
  const text = new TextEncoder().encode(extended.text.slice(0, 200));
  // OPT pseudo-record: root name, type 41, UDP size 1232, no extended rcode/flags, one EDE option.
  const option = new Uint8Array(4 + 2 + text.length);
  const optionView = new DataView(option.buffer);
  optionView.setUint16(0, 15); // EDE
  optionView.setUint16(2, 2 + text.length);
  optionView.setUint16(4, extended.code);
  option.set(text, 6);
  const opt = new Uint8Array(11 + option.length);
  const optView = new DataView(opt.buffer);
  optView.setUint16(1, 41);
  optView.setUint16(3, 1232);
  optView.setUint16(9, option.length);
  opt.set(option, 11);

  const reply = new Uint8Array(question.end + opt.length);
  reply.set(query.subarray(0, question.end));
  const view = new DataView(reply.buffer);
  const recursionDesired = view.getUint16(2) & 0x0100;
  view.setUint16(2, 0x8000 | 0x0080 | recursionDesired | (rcode & 0xf)); // QR, RA
  view.setUint16(6, 0);
  view.setUint16(8, 0);
  view.setUint16(10, 1);
  reply.set(opt, question.end);
  return reply;
}

/** A name at `offset`, following compression pointers (at most 160 labels and pointers in all). */
function readName(message: Uint8Array, offset: number): { name: string; next: number } | null {
  const labels: string[] = [];
  let at = offset;
  let next = -1;
  for (let steps = 0; steps < 160; steps++) {
    if (at >= message.length) return null;
    const length = message[at]!;
    if (length === 0) {
      return { name: labels.join('.'), next: next === -1 ? at + 1 : next };
    }
    if ((length & 0xc0) === 0xc0) {
      if (at + 1 >= message.length) return null;
      if (next === -1) next = at + 2;
      at = ((length & 0x3f) << 8) | message[at + 1]!;
      continue;
    }
    if (length > 63 || at + 1 + length > message.length) return null;
    labels.push(new TextDecoder().decode(message.subarray(at + 1, at + 1 + length)));
    at += 1 + length;
  }
  return null;
}

/** RFC 5952's short form: the longest run of two or more zero groups becomes `::`. */
function compressIpv6(groups: string[]): string {
  let best = { at: -1, length: 1 };
  for (let at = 0; at < 8; ) {
    let end = at;
    while (end < 8 && groups[end] === '0') end++;
    if (end - at > best.length) best = { at, length: end - at };
    at = end === at ? at + 1 : end;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.length).join(':')}`;
}
