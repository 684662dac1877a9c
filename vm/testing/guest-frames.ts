// Ethernet frames as the guest's network card sends them, for the network tests.
import dnsPacket from 'dns-packet';
import { checksum } from '../offline-network.ts';

export const GUEST_MAC = [0x00, 0x22, 0x15, 0xaa, 0xbb, 0xcc];
export const GUEST_IP = [192, 168, 86, 100];
export const ROUTER_MAC = [0x52, 0x54, 0x00, 0x01, 0x02, 0x03];
export const REASON = 'the computer is offline (its network is turned off for this stack in Settings)';

export const bytes = (...parts: (number[] | Uint8Array)[]) => new Uint8Array(parts.flatMap((part) => [...part]));
export const u16 = (n: number) => [n >> 8, n & 0xff];

/** A guest frame to the router: Ethernet + IPv4 (+ the protocol's header and payload). */
export function ipFrame(protocol: number, destination: number[], payload: Uint8Array): Uint8Array {
  const header = bytes([0x45, 0], u16(20 + payload.length), [0, 1, 0x40, 0, 64, protocol, 0, 0], GUEST_IP, destination);
  header.set(u16(checksum(header)), 10);
  return bytes(ROUTER_MAC, GUEST_MAC, u16(0x0800), header, payload);
}

export function dnsQuery(name: string): Uint8Array {
  const query = dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] });
  return ipFrame(17, [192, 168, 86, 1], bytes(u16(40000), u16(53), u16(8 + query.length), [0, 0], query));
}

const u32 = (n: number) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];

/** TCP flags, as the header carries them. */
export const TCP = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10 } as const;

/** A TCP segment from the guest's port 51000 to `destination:port` (no options; checksum left 0). */
export function tcpFrame(destination: number[], port: number, segment: { seq: number; ack?: number; flags: number; window?: number; payload?: Uint8Array }): Uint8Array {
  const header = bytes(u16(51000), u16(port), u32(segment.seq), u32(segment.ack ?? 0), [0x50, segment.flags], u16(segment.window ?? 64240), [0, 0, 0, 0]);
  return ipFrame(6, destination, bytes(header, segment.payload ?? []));
}

export function tcpSyn(destination: number[], port: number, seq: number): Uint8Array {
  return tcpFrame(destination, port, { seq, flags: TCP.SYN });
}
