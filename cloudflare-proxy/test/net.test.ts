// The computer's network through the real Worker under Miniflare: the resolver answers only for
// allowed names and never with a private address; the Wisp relay connects only to what that
// resolver gave this device, on allowed ports. The "internet" is this test's own loopback servers
// (a TCP echo server, a server that sends 1 MiB, and a DNS-over-HTTPS resolver), let through by
// the test configuration only.
import dnsPacket from 'dns-packet';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startLocalProxy, type LocalProxy, type LocalProxyOptions } from '../local.mjs';
import { pairLocally } from './pair.ts';

const OWNER = 'net-owner';
let echo: TcpServer;
let echoPort = 0;
let bulk: TcpServer;
let bulkPort = 0;
/** What the bulk server sends to each connection, then closes. */
const BULK = Buffer.from(Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7 + (i >> 10)) & 0xff));
let resolver: HttpServer;
let proxy: LocalProxy;
let ticket = '';

/** What the test's resolver answers: an allowed name on this machine, one pointing at a private address, one not allowed. */
const ZONE: Record<string, string> = {
  'pkg.allowed.test': '127.0.0.1',
  'private.allowed.test': '10.0.0.5',
  'metadata.allowed.test': '169.254.169.254',
  'other.test': '127.0.0.1',
};

beforeAll(async () => {
  // A relay that stops a stream resets its connection: not an error of the test's servers.
  echo = createTcpServer((socket) => socket.on('error', () => {}).pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoPort = (echo.address() as AddressInfo).port;
  bulk = createTcpServer((socket) => socket.on('error', () => {}).end(BULK));
  await new Promise<void>((resolve) => bulk.listen(0, '127.0.0.1', resolve));
  bulkPort = (bulk.address() as AddressInfo).port;
  resolver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const query = dnsPacket.decode(Buffer.concat(chunks));
      const question = query.questions![0]!;
      const address = question.type === 'A' ? ZONE[question.name] : undefined;
      const reply = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (ZONE[question.name] ? 0 : 3),
        questions: query.questions,
        answers: address ? [{ type: 'CNAME', name: question.name, ttl: 60, data: `cdn.${question.name}` }, { type: 'A', name: `cdn.${question.name}`, ttl: 60, data: address }] : [],
      });
      res.writeHead(200, { 'content-type': 'application/dns-message' }).end(reply);
    });
  });
  await new Promise<void>((resolve) => resolver.listen(0, '127.0.0.1', resolve));
  proxy = await startLocalProxy(proxyOptions());
  ticket = await newTicket(await pairLocally(proxy.url));
});

function proxyOptions(): LocalProxyOptions {
  return {
    port: 0,
    ownerToken: OWNER,
    localPairing: true,
    netAllowedHosts: ['*.allowed.test'],
    netAllowedPorts: [echoPort, bulkPort, 443],
    netAllowPrivate: [`127.0.0.1:${echoPort}`, `127.0.0.1:${bulkPort}`],
    dnsUpstream: `http://127.0.0.1:${(resolver.address() as AddressInfo).port}/dns-query`,
  };
}

afterAll(async () => {
  await proxy?.dispose();
  echo?.close();
  bulk?.close();
  resolver?.closeAllConnections();
  resolver?.close();
});

async function newTicket(deviceToken: string, base = proxy.url): Promise<string> {
  const response = await fetch(`${base}/v1/net/ticket`, { method: 'POST', headers: { authorization: `Bearer ${deviceToken}` } });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { ticket: string; hosts: string[] };
  expect(body.hosts).toEqual(['*.allowed.test']);
  return body.ticket;
}

async function lookup(name: string, withTicket: string | null = ticket, base = proxy.url) {
  const response = await fetch(`${base}/dns-query`, {
    method: 'POST',
    headers: { 'content-type': 'application/dns-message', ...(withTicket ? { authorization: `Bearer ${withTicket}` } : {}) },
    body: new Uint8Array(dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] })),
  });
  if (response.headers.get('content-type') !== 'application/dns-message') return { status: response.status, refused: null, answer: null };
  const answer = dnsPacket.decode(Buffer.from(await response.arrayBuffer())) as dnsPacket.DecodedPacket & { rcode?: string };
  return { status: response.status, refused: response.headers.get('x-stackdocs-refused'), answer };
}

// --- a minimal Wisp v1 client, as v86's: frames are u8 type | u32 LE stream id | payload ---
const frame = (type: number, id: number, payload: Uint8Array = new Uint8Array()) => {
  const out = Buffer.alloc(5 + payload.length);
  out.writeUInt8(type, 0);
  out.writeUInt32LE(id, 1);
  out.set(payload, 5);
  return out;
};
const connectFrame = (id: number, host: string, port: number) => {
  const payload = Buffer.alloc(3 + Buffer.byteLength(host));
  payload.writeUInt8(0x01, 0);
  payload.writeUInt16LE(port, 1);
  payload.write(host, 3);
  return frame(0x01, id, payload);
};

interface Received {
  type: number;
  id: number;
  payload: Buffer;
}

async function openWisp(withTicket = ticket, base = proxy.url): Promise<{ ws: WebSocket; next(id: number): Promise<Received>; closed: Promise<{ code: number; reason: string }>; close(): void }> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/wisp?ticket=${encodeURIComponent(withTicket)}`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const inbox: Received[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data: Buffer) => {
    inbox.push({ type: data.readUInt8(0), id: data.readUInt32LE(1), payload: data.subarray(5) });
    waiters.splice(0).forEach((wake) => wake());
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const next = async (id: number): Promise<Received> => {
    for (;;) {
      const at = inbox.findIndex((packet) => packet.id === id);
      if (at >= 0) return inbox.splice(at, 1)[0]!;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no packet on stream ${id}`)), 5_000);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return { ws, next, closed, close: () => ws.close() };
}

/** The HTTP status a WebSocket upgrade to the relay gets when it is refused (101 when it opens). */
function upgradeStatus(withTicket: string | null, base = proxy.url): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/wisp${withTicket ? `?ticket=${encodeURIComponent(withTicket)}` : ''}`);
    ws.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => {
      resolve(101);
      ws.close();
    });
    ws.once('error', (error) => reject(error));
  });
}

describe('where a paired device learns its computer may connect (GET /v1/device)', () => {
  it('lists the allowed hosts and ports to a paired device, and nothing to one that is not', async () => {
    const token = await pairLocally(proxy.url, 'asks for its network');
    const response = await fetch(`${proxy.url}/v1/device`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { device: { label: string }; network?: unknown };
    expect(body.device.label).toBe('asks for its network');
    expect(body.network).toEqual({ hosts: ['*.allowed.test'], ports: [echoPort, bulkPort, 443] });
    const stranger = await fetch(`${proxy.url}/v1/device`);
    expect(stranger.status).toBe(401);
    expect(await stranger.json()).not.toHaveProperty('network');
  });
});

describe("the computer's resolver (/dns-query)", () => {
  it('answers an allowed name through the upstream resolver', async () => {
    const { status, answer, refused } = await lookup('pkg.allowed.test');
    expect(status).toBe(200);
    expect(refused).toBeNull();
    expect(answer?.rcode).toBe('NOERROR');
    expect(answer?.answers?.filter((a) => a.type === 'A').map((a) => (a as { data: string }).data)).toEqual(['127.0.0.1']);
  });

  it('refuses at once, saying why, a name that is not allowed or that resolves to a private address', async () => {
    const other = await lookup('other.test');
    expect(other.answer?.rcode).toBe('REFUSED');
    expect(other.answer?.answers).toEqual([]);
    expect(other.refused).toContain('other.test is not a host this proxy lets the computer reach');
    // A page (the VM's worker) may read why.
    const fromPage = await fetch(`${proxy.url}/dns-query`, {
      method: 'POST',
      headers: { origin: 'http://localhost:4173', 'content-type': 'application/dns-message', authorization: `Bearer ${ticket}` },
      body: new Uint8Array(dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'other.test' }] })),
    });
    expect(fromPage.headers.get('access-control-expose-headers')).toContain('x-stackdocs-refused');
    // The reason travels in the answer too (RFC 8914 Extended DNS Error 18, "Prohibited").
    const ede = other.answer?.additionals?.find((a) => a.type === 'OPT') as { options?: { code: number; data?: Buffer }[] } | undefined;
    expect(ede?.options?.[0]?.code).toBe(15);
    expect(ede?.options?.[0]?.data?.subarray(2).toString()).toContain('other.test is not a host');

    for (const [name, address] of [['private.allowed.test', '10.0.0.5'], ['metadata.allowed.test', '169.254.169.254']]) {
      const refused = await lookup(name!);
      expect(refused.answer?.rcode).toBe('REFUSED');
      expect(refused.refused).toContain(`resolves to ${address}`);
    }
  });

  it('needs a network ticket, and refuses a revoked device’s', async () => {
    expect((await lookup('pkg.allowed.test', null)).status).toBe(401);
    expect((await lookup('pkg.allowed.test', 'sdk_net_made-up')).status).toBe(401);
    const token = await pairLocally(proxy.url, 'to revoke');
    const revokedTicket = await newTicket(token);
    const { devices } = (await (await fetch(`${proxy.url}/v1/owner/devices`, { headers: { authorization: `Bearer ${OWNER}` } })).json()) as { devices: { id: string; label: string }[] };
    await fetch(`${proxy.url}/v1/owner/devices/${devices.find((d) => d.label === 'to revoke')!.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${OWNER}` } });
    expect((await lookup('pkg.allowed.test', revokedTicket)).status).toBe(401);
    expect(await upgradeStatus(revokedTicket)).toBe(401);
  });
});

describe('web_fetch judges names by where they lead, with the same guard', () => {
  it('refuses a public-looking name that resolves to a private or link-local address', async () => {
    const token = await pairLocally(proxy.url, 'fetcher');
    for (const [name, address] of [['private.allowed.test', '10.0.0.5'], ['metadata.allowed.test', '169.254.169.254'], ['pkg.allowed.test', '127.0.0.1']]) {
      const response = await fetch(`${proxy.url}/v1/fetch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ url: `http://${name}/page` }),
      });
      expect(response.status).toBe(403);
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error).toEqual({ type: 'blocked_address', message: `${name} resolves to ${address}, a private, local or reserved address; the proxy never fetches those.` });
    }
  });
});

describe('the Wisp relay (/v1/wisp)', () => {
  it('tells the buffer size first, then relays a TCP stream to an address the resolver gave this device', async () => {
    expect((await lookup('pkg.allowed.test')).answer?.rcode).toBe('NOERROR');
    const wisp = await openWisp();
    try {
      const hello = await wisp.next(0);
      expect(hello.type).toBe(0x03);
      expect(hello.payload.readUInt32LE(0)).toBe(128);
      // As v86 does: the address, not the name; data may follow before the connection opens.
      wisp.ws.send(connectFrame(1, '127.0.0.1', echoPort));
      wisp.ws.send(frame(0x02, 1, Buffer.from('ping through the relay')));
      const echoed = await wisp.next(1);
      expect(echoed.type).toBe(0x02);
      expect(echoed.payload.toString()).toBe('ping through the relay');
      wisp.ws.send(frame(0x04, 1, Uint8Array.of(0x02)));
      // A name works too (other clients send names), under the same rules.
      wisp.ws.send(connectFrame(2, 'pkg.allowed.test', echoPort));
      wisp.ws.send(frame(0x02, 2, Buffer.from('by name')));
      expect((await wisp.next(2)).payload.toString()).toBe('by name');
    } finally {
      wisp.close();
    }
  });

  it('relays a download whole and in order, in frames far larger than the socket’s 4 KB reads, then closes the stream', async () => {
    expect((await lookup('pkg.allowed.test')).answer?.rcode).toBe('NOERROR');
    const wisp = await openWisp();
    try {
      await wisp.next(0);
      wisp.ws.send(connectFrame(3, '127.0.0.1', bulkPort));
      const parts: Buffer[] = [];
      for (;;) {
        const packet = await wisp.next(3);
        if (packet.type === 0x04) {
          expect(packet.payload.readUInt8(0)).toBe(0x02); // closed voluntarily: the server ended
          break;
        }
        expect(packet.type).toBe(0x02);
        parts.push(packet.payload);
      }
      expect(Buffer.concat(parts).equals(BULK)).toBe(true);
      // Each frame is a TCP segment in the guest; 256 would be one per socket read.
      expect(parts.length).toBeLessThan(64);
      expect(Math.max(...parts.map((part) => part.length))).toBeLessThanOrEqual(60 * 1024);
    } finally {
      wisp.close();
    }
  });

  it('refuses private, loopback and link-local addresses, names not allowed, names resolving to private addresses, and other ports', async () => {
    const wisp = await openWisp();
    try {
      await wisp.next(0);
      const cases: [string, number][] = [
        ['10.0.0.5', 443],
        ['169.254.169.254', 443],
        ['127.0.0.1', 443], // loopback on a port the test did not let through
        ['::1', echoPort],
        ['::ffff:127.0.0.1', echoPort],
        ['0.0.0.0', echoPort],
        ['private.allowed.test', 443],
        ['other.test', echoPort],
        ['pkg.allowed.test', 22], // an allowed name on a port that is not
      ];
      let id = 10;
      for (const [host, port] of cases) {
        wisp.ws.send(connectFrame(++id, host, port));
        const answer = await wisp.next(id);
        expect([answer.type, answer.payload[0]], `${host}:${port}`).toEqual([0x04, 0x48]);
      }
    } finally {
      wisp.close();
    }
  });

  it('refuses an address this device never had answered, even one that is allowed for another', async () => {
    const stranger = await newTicket(await pairLocally(proxy.url, 'stranger'));
    const wisp = await openWisp(stranger);
    try {
      await wisp.next(0);
      wisp.ws.send(connectFrame(1, '127.0.0.1', echoPort));
      const answer = await wisp.next(1);
      expect([answer.type, answer.payload[0]]).toEqual([0x04, 0x48]);
    } finally {
      wisp.close();
    }
  });

  it('needs a ticket to open, and says the route is a WebSocket', async () => {
    expect(await upgradeStatus(null)).toBe(401);
    expect((await fetch(`${proxy.url}/v1/wisp?ticket=${ticket}`)).status).toBe(426);
  });
});

describe('the relay ends with its device, and holds its bytes a day', () => {
  it('stops an open relay once its device is revoked: the next stream is blocked and the socket closes saying why', async () => {
    const token = await pairLocally(proxy.url, 'revoked while online');
    const own = await newTicket(token);
    expect((await lookup('pkg.allowed.test', own)).answer?.rcode).toBe('NOERROR');
    const wisp = await openWisp(own);
    try {
      await wisp.next(0);
      wisp.ws.send(connectFrame(1, '127.0.0.1', echoPort));
      wisp.ws.send(frame(0x02, 1, Buffer.from('before')));
      expect((await wisp.next(1)).payload.toString()).toBe('before');
      const { devices } = (await (await fetch(`${proxy.url}/v1/owner/devices`, { headers: { authorization: `Bearer ${OWNER}` } })).json()) as { devices: { id: string; label: string }[] };
      const id = devices.find((d) => d.label === 'revoked while online')!.id;
      expect((await fetch(`${proxy.url}/v1/owner/devices/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${OWNER}` } })).status).toBe(200);
      wisp.ws.send(connectFrame(2, '127.0.0.1', echoPort));
      const refused = await wisp.next(2);
      expect([refused.type, refused.payload[0]]).toEqual([0x04, 0x48]);
      // The stream that was open ends too, and the socket says why.
      const ended = await wisp.next(1);
      expect([ended.type, ended.payload[0]]).toEqual([0x04, 0x48]);
      expect(await wisp.closed).toEqual({ code: 1008, reason: expect.stringContaining('unpaired by the proxy') });
    } finally {
      wisp.close();
    }
    expect(await upgradeStatus(own)).toBe(401);
  });

  it("stops a device's relay at its bytes for the day, saying so, and refuses it a new one until tomorrow", async () => {
    const limited = await startLocalProxy({ ...proxyOptions(), netBytesPerDay: 256 * 1024 });
    try {
      const own = await newTicket(await pairLocally(limited.url, 'downloads a lot'), limited.url);
      expect((await lookup('pkg.allowed.test', own, limited.url)).answer?.rcode).toBe('NOERROR');
      const wisp = await openWisp(own, limited.url);
      try {
        await wisp.next(0);
        wisp.ws.send(connectFrame(1, '127.0.0.1', bulkPort));
        let received = 0;
        let last: Received;
        for (;;) {
          last = await wisp.next(1);
          if (last.type !== 0x02) break;
          received += last.payload.length;
        }
        // Closed as throttled, within a frame of the limit, long before the 1 MiB the server sends.
        expect([last.type, last.payload[0]]).toEqual([0x04, 0x49]);
        expect(received).toBeGreaterThan(128 * 1024);
        expect(received).toBeLessThan(256 * 1024 + 64 * 1024);
        expect(await wisp.closed).toEqual({ code: 1008, reason: expect.stringContaining('256 KB of network for today') });
      } finally {
        wisp.close();
      }
      expect(await upgradeStatus(own, limited.url)).toBe(429);
    } finally {
      await limited.dispose();
    }
  });
});
