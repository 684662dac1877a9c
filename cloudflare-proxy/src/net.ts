// The computer's network through the proxy: a resolver (DNS over HTTPS) that answers only for the
// hosts the owner allows and never with a private address, and a Wisp relay that opens TCP only
// to addresses that resolver gave this device, on allowed ports. Judged on the address a name
// resolves to, not only as written: an allowed name pointing at 10.0.0.5 is refused.
import { connect } from 'cloudflare:sockets';
import { readBody } from './body.ts';
import { answerAddresses, parseQuestion, refusal, RCODE_REFUSED, TYPE_A } from './dns.ts';
import { addressBlockedReason, aQuery, askUpstream } from './resolve.ts';
import type { Refusal } from './device-types.ts';
import { devices, type Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { bearer } from './pairing.ts';
import { REASON, serveWisp, STREAM_TCP, type RelaySocket } from './wisp.ts';

/** Where packages and code come from: Python's index and files, npm, Debian, GitHub. */
export const DEFAULT_NET_HOSTS = [
  'pypi.org',
  'files.pythonhosted.org',
  'registry.npmjs.org',
  'deb.debian.org',
  'security.debian.org',
  'github.com',
  'codeload.github.com',
  '*.githubusercontent.com',
];
export const DEFAULT_NET_PORTS = [80, 443];
/** How long a resolved address stays connectable without a new lookup (at least, and at most). */
const MIN_TTL_S = 300;
const MAX_TTL_S = 3600;
const CONNECT_TIMEOUT_MS = 10_000;
/** RFC 8914: "Prohibited". */
const EDE_PROHIBITED = 18;

export function netHosts(env: Env): string[] {
  const listed = (env.NET_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  return listed.length ? listed : DEFAULT_NET_HOSTS;
}

export function netPorts(env: Env): number[] {
  const listed = (env.NET_ALLOWED_PORTS ?? '').split(',').map((p) => Number(p.trim())).filter((p) => Number.isInteger(p) && p > 0 && p < 65536);
  return listed.length ? listed : DEFAULT_NET_PORTS;
}

/** `pypi.org` matches itself; `*.githubusercontent.com` matches any name under it. */
export function hostAllowed(name: string, patterns: readonly string[]): boolean {
  const host = name.toLowerCase().replace(/\.+$/, '');
  return patterns.some((pattern) => (pattern.startsWith('*.') ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1 : host === pattern));
}

/** The tests' allow-list of private `address` or `address:port` entries (empty in production). */
function testOnly(env: Env): string[] {
  return (env.NET_ALLOW_PRIVATE ?? '').split(',').map((h) => h.trim()).filter(Boolean);
}

/**
 * Whether the relay may connect to `address` (on `port`; any port when the resolver judges an
 * answer, before a port is known): public, or on the tests' allow-list.
 */
export function addressAllowed(address: string, env: Env, port?: number): boolean {
  if (addressBlockedReason(address) === null) return true;
  return testOnly(env).some((entry) => entry === address || (port === undefined ? entry.startsWith(`${address}:`) : entry === `${address}:${port}`));
}

/** POST /v1/net/ticket: a credential for the computer's network only (the relay and the resolver), valid 12 hours. */
export async function netTicket(env: Env, deviceId: string): Promise<Response> {
  const ticket = await devices(env).createTicket(deviceId);
  return Response.json({ ...ticket, wisp_path: '/v1/wisp', dns_path: '/dns-query', hosts: netHosts(env), ports: netPorts(env) }, { status: 201, headers: { 'cache-control': 'no-store' } });
}

/** The device a network ticket belongs to, or the refusal to send. */
async function ticketDevice(env: Env, ticket: string | null): Promise<string | Response> {
  const found = await devices(env).ticketDevice(ticket);
  if (found.ok) return found.device_id;
  return errorResponse(found.status, found.type, found.message, { 'x-should-retry': 'false' });
}

/** Relayed bytes counted here between checks with the device's record (and at least this often). */
const CHECK_BYTES = 256 * 1024;
const CHECK_MS = 10_000;

/**
 * One relay's count of the device's bytes, and its leave to go on. The Durable Object is asked
 * (and told the bytes since) at every new stream, every CHECK_BYTES and every CHECK_MS of traffic,
 * and at once when the count here reaches the day's limit: so a revoked device's relay stops at
 * its next stream or its next check, and the limit holds within a frame on one relay.
 */
class NetMeter {
  private used = 0;
  private limit = Infinity;
  private pending = 0;
  private checkedAt = 0;
  private refusal: Refusal | null = null;
  private checking: Promise<Refusal | null> | null = null;
  onRefused: (refusal: Refusal) => void = () => {};

  constructor(
    private readonly env: Env,
    private readonly deviceId: string,
  ) {}

  /** Sends the bytes counted so far and learns whether the relay may go on (null when it may). */
  check(): Promise<Refusal | null> {
    if (this.refusal) return Promise.resolve(this.refusal);
    const bytes = this.pending;
    this.pending = 0;
    this.checkedAt = Date.now();
    const previous = this.checking ?? Promise.resolve(null);
    const checking = previous.then(async () => {
      const answer = await devices(this.env).netUse(this.deviceId, bytes).catch(() => null);
      // The record could not be asked: the bytes wait for the next check.
      if (answer === null) {
        this.pending += bytes;
        return this.refusal;
      }
      if (!answer.ok) return this.refuse(answer);
      this.used = answer.bytes_today;
      this.limit = answer.limit;
      return null;
    });
    this.checking = checking;
    return checking;
  }

  add(bytes: number): void {
    if (this.refusal) return;
    this.pending += bytes;
    if (this.used + this.pending >= this.limit || this.pending >= CHECK_BYTES || Date.now() - this.checkedAt >= CHECK_MS) void this.check();
  }

  private refuse(refusal: Refusal): Refusal {
    if (!this.refusal) {
      this.refusal = refusal;
      this.onRefused(refusal);
    }
    return refusal;
  }
}

/** GET /v1/wisp?ticket=…: the relay, as a WebSocket. */
export async function wispRelay(request: Request, env: Env): Promise<Response> {
  if (request.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
    return errorResponse(426, 'invalid_request', 'This route is a WebSocket (the Wisp protocol): connect with Upgrade: websocket.', { upgrade: 'websocket' });
  }
  const device = await ticketDevice(env, new URL(request.url).searchParams.get('ticket'));
  if (device instanceof Response) return device;
  const meter = new NetMeter(env, device);
  const refused = await meter.check();
  if (refused) return errorResponse(refused.status, refused.type, refused.message, { 'x-should-retry': 'false', ...(refused.retry_after_s ? { 'retry-after': String(refused.retry_after_s) } : {}) });
  const pair = new WebSocketPair();
  const [client, server] = [pair[0], pair[1]];
  // Binary frames as ArrayBuffers (newer compatibility dates default to Blobs).
  server.binaryType = 'arraybuffer';
  server.accept();
  const relay = serveWisp(server, {
    open: async (host, port, type) => {
      const refusal = await meter.check();
      if (refusal) return { reason: reasonFor(refusal) };
      return openStream(env, device, host, port, type);
    },
    onBytes: (bytes) => meter.add(bytes),
  });
  meter.onRefused = (refusal) => relay.stop(reasonFor(refusal), refusal.message);
  server.addEventListener('close', () => void meter.check());
  return new Response(null, { status: 101, webSocket: client });
}

/** Over the day's bytes: throttled; a device no longer paired: blocked. */
function reasonFor(refusal: Refusal): number {
  return refusal.type === 'net_daily_limit' ? REASON.throttled : REASON.blocked;
}

async function openStream(env: Env, deviceId: string, host: string, port: number, type: number): Promise<{ socket: RelaySocket } | { reason: number }> {
  if (type !== STREAM_TCP || !netPorts(env).includes(port)) return { reason: REASON.blocked };
  let address = host;
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) {
    // A name (v86 sends addresses, other clients may not): resolved here, under the same rules.
    if (!hostAllowed(host, netHosts(env))) return { reason: REASON.blocked };
    const resolved = await resolve(env, deviceId, host).catch(() => null);
    if (!resolved) return { reason: REASON.unreachable };
    // It resolved, but only to addresses the relay never connects to.
    if (resolved.usable.length === 0) return { reason: resolved.refused ? REASON.blocked : REASON.unreachable };
    address = resolved.usable[0]!;
  }
  if (!addressAllowed(address, env, port)) return { reason: REASON.blocked };
  // Only addresses this device's resolver handed out for an allowed name.
  if (!(await devices(env).resolvedName(deviceId, address))) return { reason: REASON.blocked };
  const socket = connect({ hostname: address, port }, { allowHalfOpen: false });
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), CONNECT_TIMEOUT_MS));
  const opened = await Promise.race([socket.opened.then(() => 'open' as const), timeout]).catch(() => 'failed' as const);
  if (opened !== 'open') {
    void socket.close().catch(() => {});
    return { reason: opened === 'timeout' ? REASON.timeout : REASON.unreachable };
  }
  return { socket };
}

/** Looks `name` up upstream and remembers its usable addresses for the device; null when the lookup failed. */
async function resolve(env: Env, deviceId: string, name: string): Promise<{ usable: string[]; refused: boolean } | null> {
  const answer = await askUpstream(env, aQuery(name));
  const parsed = answer ? answerAddresses(answer) : null;
  if (!parsed) return null;
  const usable = parsed.records.filter((record) => addressAllowed(record.address, env));
  await devices(env).rememberAddresses(deviceId, name, usable.map((r) => ({ address: r.address, ttl: clampTtl(r.ttl) })));
  return { usable: usable.map((r) => r.address), refused: usable.length < parsed.records.length };
}

/** POST /dns-query (application/dns-message), or GET ?dns=: the computer's resolver. */
export async function dnsQuery(request: Request, env: Env): Promise<Response> {
  const device = await ticketDevice(env, bearer(request));
  if (device instanceof Response) {
    await request.body?.cancel();
    return device;
  }
  let query: Uint8Array;
  if (request.method === 'GET') {
    const encoded = new URL(request.url).searchParams.get('dns') ?? '';
    try {
      query = Uint8Array.from(atob(encoded.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    } catch {
      return errorResponse(400, 'invalid_request', 'The dns parameter is not base64url.');
    }
  } else {
    const body = await readBody(request, 4096, 'The DNS query');
    if (body instanceof Response) return body;
    query = body;
  }
  const question = parseQuestion(query);
  if (!question) return errorResponse(400, 'invalid_request', 'That is not a DNS query with one question.');
  const dnsHeaders = { 'content-type': 'application/dns-message', 'cache-control': 'no-store' };
  if (!hostAllowed(question.name, netHosts(env))) {
    const why = `${question.name} is not a host this proxy lets the computer reach (its owner allows ${netHosts(env).join(', ')})`;
    return new Response(refusal(query, question, RCODE_REFUSED, { code: EDE_PROHIBITED, text: why }), { headers: { ...dnsHeaders, 'x-stackdocs-refused': why } });
  }
  const answer = await askUpstream(env, query);
  if (!answer) return errorResponse(502, 'upstream_unreachable', 'The proxy could not reach its DNS resolver.');
  const parsed = answerAddresses(answer);
  if (!parsed) return errorResponse(502, 'upstream_unreachable', 'The DNS resolver answered something that is not DNS.');
  const refused = parsed.records.find((record) => !addressAllowed(record.address, env));
  if (refused) {
    const why = `${question.name} resolves to ${refused.address}, a private, local or reserved address; the proxy never connects there`;
    return new Response(refusal(query, question, RCODE_REFUSED, { code: EDE_PROHIBITED, text: why }), { headers: { ...dnsHeaders, 'x-stackdocs-refused': why } });
  }
  if (question.type === TYPE_A) {
    await devices(env).rememberAddresses(device, question.name, parsed.records.map((r) => ({ address: r.address, ttl: clampTtl(r.ttl) })));
  }
  return new Response(answer as Uint8Array<ArrayBuffer>, { headers: dnsHeaders });
}

function clampTtl(ttl: number): number {
  return Math.min(MAX_TTL_S, Math.max(MIN_TTL_S, ttl));
}
