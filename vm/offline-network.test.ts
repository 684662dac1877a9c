import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { bytes, dnsQuery, GUEST_IP, GUEST_MAC, REASON, ROUTER_MAC, tcpSyn, u16 } from './testing/guest-frames.ts';
import type { DnsNotice } from './network.ts';
import { answer, checksum } from './offline-network.ts';

function run(frame: Uint8Array) {
  const notices: DnsNotice[] = [];
  const reply = answer(frame, REASON, (notice) => notices.push(notice));
  return { reply, notices };
}

describe('the card with no network behind it', () => {
  it('tells the guest where the router is', () => {
    const request = bytes([0xff, 0xff, 0xff, 0xff, 0xff, 0xff], GUEST_MAC, u16(0x0806), u16(1), u16(0x0800), [6, 4], u16(1), GUEST_MAC, GUEST_IP, [0, 0, 0, 0, 0, 0], [192, 168, 86, 1]);
    const { reply } = run(request);
    expect([...reply!.subarray(0, 14)]).toEqual([...GUEST_MAC, ...ROUTER_MAC, 0x08, 0x06]);
    expect([...reply!.subarray(20, 22)]).toEqual([0, 2]); // a reply
    expect([...reply!.subarray(22, 32)]).toEqual([...ROUTER_MAC, 192, 168, 86, 1]);
    expect([...reply!.subarray(32, 42)]).toEqual([...GUEST_MAC, ...GUEST_IP]);
    // Any other address is nobody's.
    const other = request.slice();
    other[41] = 7;
    expect(run(other).reply).toBeNull();
  });

  it('refuses a lookup at once, from the address asked, and says why', () => {
    const { reply, notices } = run(dnsQuery('pypi.org'));
    expect(notices).toEqual([{ name: 'pypi.org', reason: REASON }]);
    expect([...reply!.subarray(0, 6)]).toEqual(GUEST_MAC);
    const ip = reply!.subarray(14, 34);
    expect(checksum(ip)).toBe(0);
    expect([...ip.subarray(12, 16), ...ip.subarray(16, 20)]).toEqual([192, 168, 86, 1, ...GUEST_IP]);
    const udp = reply!.subarray(34);
    expect([...udp.subarray(0, 4)]).toEqual([...u16(53), ...u16(40000)]);
    expect((udp[4]! << 8) | udp[5]!).toBe(udp.length);
    const decoded = dnsPacket.decode(Buffer.from(udp.subarray(8))) as dnsPacket.DecodedPacket & { rcode?: string };
    expect([decoded.id, decoded.rcode, decoded.questions?.[0]?.name]).toEqual([7, 'REFUSED', 'pypi.org']);
  });

  it('resets a new connection to any address at once, with a valid checksum, and says why', () => {
    const { reply, notices } = run(tcpSyn([151, 101, 0, 223], 443, 0xfffffff0));
    expect(notices).toEqual([{ name: '151.101.0.223:443', reason: REASON }]);
    const ip = reply!.subarray(14, 34);
    expect(checksum(ip)).toBe(0);
    const tcp = reply!.subarray(34);
    expect([...tcp.subarray(0, 4)]).toEqual([...u16(443), ...u16(51000)]);
    expect(new DataView(tcp.buffer, tcp.byteOffset).getUint32(8)).toBe(0xfffffff1);
    expect(tcp[13]).toBe(0x14); // RST + ACK
    const pseudo = bytes([151, 101, 0, 223], GUEST_IP, [0, 6], u16(tcp.length), tcp);
    expect(checksum(pseudo)).toBe(0);
  });

  it('lets everything else go unanswered: segments of no connection, other protocols, garbage', () => {
    const ack = tcpSyn([10, 0, 0, 1], 80, 1);
    ack[34 + 13] = 0x10;
    for (const frame of [ack, new Uint8Array(10), bytes(ROUTER_MAC, GUEST_MAC, u16(0x86dd), new Uint8Array(40)), dnsQuery('x.test').subarray(0, 40)]) {
      expect(run(frame)).toEqual({ reply: null, notices: [] });
    }
  });
});
