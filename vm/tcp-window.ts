// The host end of the guest's TCP connections through the relay is v86's own small TCP stack
// (fake_network.js). It sends one segment, then the next once the guest acknowledges it; it never
// reads the guest's receive window and never sends a segment again. When the guest's reader falls
// behind (curl writing to disk while the browser is busy), the guest's window closes, its Linux
// drops the segment sent into the closed window, and once the reader catches up the guest says
// so with an ACK that acknowledges nothing new (a window update). v86 ignored that ACK: it still
// waited for the dropped segment's acknowledgement, and the download stopped for good (curl in
// the browser: 122,711 of 10,485,760 bytes in 300 s). Here, that window update sends the
// unacknowledged segment again.

/** The parts of v86's TCPConnection (fake_network.js) used here; v86 keeps these names. */
interface FakeTcpConnection {
  /** A segment is out, waiting for the guest's acknowledgement. */
  pending?: boolean;
  /** The highest acknowledgement number the guest sent. */
  last_received_ackn?: number;
  /** The guest's last segment, as v86 parsed it. */
  last?: { tcp?: { winsize?: number } };
  /** Bytes for the guest not yet acknowledged, from the unacknowledged segment's first byte on. */
  send_buffer?: { length: number };
  /** Sends the next segment from `send_buffer` unless one is pending. */
  pump?(): void;
}

/** v86's network adapter as far as its TCP connections go: keyed "guestIp:port:hostIp:port". */
export interface FakeTcpHost {
  tcp_conn?: Record<string, FakeTcpConnection | undefined>;
}

const ETHERTYPE_IPV4 = 0x0800;
const PROTO_TCP = 6;
const FLAG_SYN = 0x02;
const FLAG_RST = 0x04;

/**
 * Hands a frame from the guest's card to v86 (`deliver`); when the frame reopened a TCP window the
 * guest had closed, and acknowledged nothing new, the segment v86 is waiting on goes out again.
 * Never throws for a malformed frame (it is only delivered).
 */
export function deliverReopeningWindows(host: FakeTcpHost, frame: Uint8Array, deliver: (frame: Uint8Array) => void): void {
  const segment = tcpSegment(frame);
  const conn = segment ? host.tcp_conn?.[segment.key] : undefined;
  if (!segment || !conn) return deliver(frame);
  // The window the guest had before this frame (v86 keeps the guest's last segment).
  const before = conn.last?.tcp?.winsize;
  const acked = conn.last_received_ackn;
  deliver(frame);
  if (before !== 0 || segment.window === 0 || segment.flags & (FLAG_SYN | FLAG_RST)) return;
  // Something new acknowledged: v86 sent the next segment itself.
  if (conn.last_received_ackn !== acked || segment.ack !== acked) return;
  if (!conn.pending || !conn.send_buffer?.length || typeof conn.pump !== 'function') return;
  conn.pending = false;
  conn.pump();
}

interface TcpSegment {
  /** v86's key of the connection: the guest's address and port, then the far end's. */
  key: string;
  ack: number;
  window: number;
  flags: number;
}

/** The TCP header of an Ethernet frame from the guest, or null when it carries no TCP. */
function tcpSegment(frame: Uint8Array): TcpSegment | null {
  if (frame.length < 14 + 20 + 20) return null;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  if (view.getUint16(12) !== ETHERTYPE_IPV4 || frame[14]! >> 4 !== 4 || frame[23] !== PROTO_TCP) return null;
  const tcp = 14 + (frame[14]! & 0x0f) * 4;
  if (tcp + 20 > frame.length) return null;
  const source = frame.subarray(26, 30).join('.');
  const destination = frame.subarray(30, 34).join('.');
  return {
    key: `${source}:${view.getUint16(tcp)}:${destination}:${view.getUint16(tcp + 2)}`,
    ack: view.getUint32(tcp + 8),
    window: view.getUint16(tcp + 14),
    flags: frame[tcp + 13]!,
  };
}
