// What the network card has behind it when the computer has no network (no paired proxy, the
// stack's switch off, the proxy unreachable at the start): the router's address answers, and
// answers no. A lookup gets REFUSED and a new TCP connection a reset at once, each with a notice
// of why, so `pip`, `curl`, `npm` and `apt-get` fail in a second with the reason in the terminal
// and in the bash tool's result, instead of waiting on resolver timeouts with nothing said.
import { concatBytes } from './bytes.ts';
import { questionName, refused, type DnsNotice } from './network.ts';

/** v86's userland router (the same defaults the Wisp adapter uses when the computer is online). */
const ROUTER_MAC = [0x52, 0x54, 0x00, 0x01, 0x02, 0x03];
const ROUTER_IP = [192, 168, 86, 1];

const ETH_ARP = 0x0806;
const ETH_IPV4 = 0x0800;
const IP_TCP = 6;
const IP_UDP = 17;
const TCP_SYN = 0x02;
const TCP_RST = 0x04;
const TCP_ACK = 0x10;

/** The reply to one Ethernet frame from the guest, if it gets one. Exported for the tests. */
export function answer(frame: Uint8Array, reason: string, onNotice: (notice: DnsNotice) => void): Uint8Array | null {
  if (frame.length < 14) return null;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const type = view.getUint16(12);
  if (type === ETH_ARP) return arpReply(frame);
  if (type !== ETH_IPV4 || frame.length < 34 || frame[14]! >> 4 !== 4) return null;
  const headerLength = (frame[14]! & 0x0f) * 4;
  const totalLength = view.getUint16(16);
  const start = 14 + headerLength;
  if (headerLength < 20 || totalLength < headerLength || 14 + totalLength > frame.length) return null;
  const protocol = frame[23]!;
  const source = frame.subarray(26, 30);
  const destination = frame.subarray(30, 34);
  const payload = frame.subarray(start, 14 + totalLength);
  if (protocol === IP_UDP && payload.length >= 8 && view.getUint16(start + 2) === 53) {
    const query = payload.subarray(8);
    if (query.length < 12) return null;
    onNotice({ name: questionName(query) ?? 'a name', reason });
    const udp = concatBytes(u16(53), u16(view.getUint16(start)), u16(0), u16(0), refused(query));
    new DataView(udp.buffer).setUint16(4, udp.length);
    return ethernet(frame, ipv4(destination, source, IP_UDP, udp));
  }
  if (protocol === IP_TCP && payload.length >= 20) {
    const flags = payload[13]!;
    if ((flags & TCP_SYN) === 0 || (flags & (TCP_ACK | TCP_RST)) !== 0) return null;
    onNotice({ name: `${destination.join('.')}:${view.getUint16(start + 2)}`, reason });
    // RST+ACK acknowledging the SYN: "connection refused" for the guest, at once.
    const tcp = concatBytes(u16(view.getUint16(start + 2)), u16(view.getUint16(start)), u32(0), u32((view.getUint32(start + 4) + 1) >>> 0), new Uint8Array([0x50, TCP_RST | TCP_ACK]), u16(0), u16(0), u16(0));
    new DataView(tcp.buffer).setUint16(16, checksum(concatBytes(destination, source, new Uint8Array([0, IP_TCP]), u16(tcp.length), tcp)));
    return ethernet(frame, ipv4(destination, source, IP_TCP, tcp));
  }
  return null;
}

/** "The router is at ROUTER_MAC", for a request about the router's address. */
function arpReply(frame: Uint8Array): Uint8Array | null {
  if (frame.length < 42) return null;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const isRequest = view.getUint16(14) === 1 && view.getUint16(16) === ETH_IPV4 && view.getUint16(20) === 1;
  if (!isRequest || !ROUTER_IP.every((byte, i) => frame[38 + i] === byte)) return null;
  const senderMac = frame.subarray(22, 28);
  const senderIp = frame.subarray(28, 32);
  const arp = concatBytes(u16(1), u16(ETH_IPV4), new Uint8Array([6, 4]), u16(2), new Uint8Array(ROUTER_MAC), new Uint8Array(ROUTER_IP), senderMac, senderIp);
  return concatBytes(senderMac, new Uint8Array(ROUTER_MAC), u16(ETH_ARP), arp);
}

/** An Ethernet frame back to the guest, from the router. */
function ethernet(request: Uint8Array, packet: Uint8Array): Uint8Array {
  return concatBytes(request.subarray(6, 12), new Uint8Array(ROUTER_MAC), u16(ETH_IPV4), packet);
}

function ipv4(source: Uint8Array, destination: Uint8Array, protocol: number, payload: Uint8Array): Uint8Array {
  const header = concatBytes(new Uint8Array([0x45, 0]), u16(20 + payload.length), u16(0), u16(0x4000), new Uint8Array([64, protocol]), u16(0), source, destination);
  new DataView(header.buffer).setUint16(10, checksum(header));
  return concatBytes(header, payload);
}

/** The Internet checksum (RFC 1071). */
export function checksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += (bytes[i]! << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

const u16 = (n: number) => new Uint8Array([(n >>> 8) & 0xff, n & 0xff]);
const u32 = (n: number) => new Uint8Array([(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

