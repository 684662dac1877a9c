// web_fetch and remote MCP judge a name on every address it resolves to (A and AAAA), refuse it
// when it cannot be looked up, and then connect to the address they judged, never looking the name
// up again. The "internet" is this test's own DNS-over-HTTPS resolver and a page server on
// loopback, let through by the test configuration only (WEB_FETCH_ALLOW_HOSTS, by address:port).
import dnsPacket from 'dns-packet';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { pairLocally } from './pair.ts';

let resolver: Server;
let site: Server;
/** Records the name each TLS handshake asks for (SNI), then ends it: it has no certificate to give. */
let tlsSite: TlsServer;
const sniSeen: string[] = [];
let sitePort = 0;
let proxy: LocalProxy;
let token = '';
const asked: { name: string; type: string }[] = [];
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

/** The test's DNS: A and AAAA answers by name; `rebind` answers loopback once, then a private address. */
function answer(name: string, type: string): { rcode: number; address?: string } {
  if (name === 'servfail.fetch.test') return { rcode: 2 };
  if (name === 'rebind.fetch.test' && type === 'A') return { rcode: 0, address: asked.filter((q) => q.name === name && q.type === 'A').length > 1 ? '10.0.0.9' : '127.0.0.1' };
  const zone: Record<string, { A?: string; AAAA?: string }> = {
    'site.fetch.test': { A: '127.0.0.1' },
    'tls.fetch.test': { A: '127.0.0.1' },
    'rebind.fetch.test': {},
    'v6.fetch.test': { A: '93.184.215.14', AAAA: '::1' },
    'ula.fetch.test': { AAAA: 'fd00::5' },
    'nowhere.fetch.test': {},
  };
  const entry = zone[name];
  if (!entry) return { rcode: 3 };
  return { rcode: 0, address: entry[type as 'A' | 'AAAA'] };
}

beforeAll(async () => {
  resolver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const query = dnsPacket.decode(Buffer.concat(chunks));
      const question = query.questions![0]!;
      asked.push({ name: question.name, type: question.type });
      const { rcode, address } = answer(question.name, question.type);
      const reply = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
        questions: query.questions,
        answers: address ? [{ type: question.type as 'A', name: question.name, ttl: 60, data: address }] : [],
      });
      res.writeHead(200, { 'content-type': 'application/dns-message' }).end(reply);
    });
  });
  site = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    if (req.url === '/chunked') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first, ');
      setTimeout(() => res.end('then the rest'), 20);
    } else if (req.url === '/gzip') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('unpacked on the way'));
    } else if (req.url === '/to-private') {
      res.writeHead(302, { location: 'http://ula.fetch.test/' }).end();
    } else {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Pinned</title><p>Reached by address.</p>');
    }
  });
  tlsSite = createTlsServer({
    SNICallback: (name, done) => {
      sniSeen.push(name);
      done(new Error('no certificate here'), undefined);
    },
  });
  tlsSite.on('tlsClientError', () => {});
  await Promise.all([resolver, site, tlsSite].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
  sitePort = (site.address() as AddressInfo).port;
  proxy = await startLocalProxy({
    port: 0,
    localPairing: true,
    webFetchAllowHosts: [`127.0.0.1:${sitePort}`, `127.0.0.1:${(tlsSite.address() as AddressInfo).port}`],
    mcpAllowedHosts: ['*.fetch.test'],
    dnsUpstream: `http://127.0.0.1:${(resolver.address() as AddressInfo).port}/dns-query`,
  });
  token = await pairLocally(proxy.url);
});

afterAll(async () => {
  await proxy?.dispose();
  for (const server of [resolver, site]) {
    server?.closeAllConnections();
    server?.close();
  }
  tlsSite?.close();
});

beforeEach(() => {
  asked.length = 0;
  seen.length = 0;
});

async function webFetch(url: string) {
  const response = await fetch(`${proxy.url}/v1/fetch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ url }) });
  return { status: response.status, body: (await response.json()) as { text?: string; title?: string; error?: { type: string; message: string } } };
}

describe('web_fetch connects to the address it checked', () => {
  it('fetches a name from the address its lookup gave, with the name as Host', async () => {
    const page = await webFetch(`http://site.fetch.test:${sitePort}/`);
    expect(page).toMatchObject({ status: 200, body: { title: 'Pinned', text: 'Reached by address.' } });
    expect(seen.map((s) => s.headers.host)).toEqual([`site.fetch.test:${sitePort}`]);
    expect(asked.filter((q) => q.name === 'site.fetch.test').map((q) => q.type).sort()).toEqual(['A', 'AAAA']);
  });

  it('reads chunked and gzip answers off the socket', async () => {
    expect((await webFetch(`http://site.fetch.test:${sitePort}/chunked`)).body.text).toBe('first, then the rest');
    expect((await webFetch(`http://site.fetch.test:${sitePort}/gzip`)).body.text).toBe('unpacked on the way');
  });

  it('starts TLS on the pinned connection for the name: the server is asked for the name, not the address', async () => {
    const port = (tlsSite.address() as AddressInfo).port;
    const refused = await webFetch(`https://tls.fetch.test:${port}/`);
    // No certificate for it here, so the fetch fails closed; what matters is whom TLS asked for.
    expect(refused).toMatchObject({ status: 502, body: { error: { type: 'upstream_unreachable' } } });
    expect(sniSeen).toEqual(['tls.fetch.test']);
  });

  it('looks a name up once: a resolver that changes its answer afterwards (DNS rebinding) is never asked again', async () => {
    const page = await webFetch(`http://rebind.fetch.test:${sitePort}/`);
    expect(page.status).toBe(200);
    expect(asked.filter((q) => q.name === 'rebind.fetch.test' && q.type === 'A')).toHaveLength(1);
    expect(seen.map((s) => s.headers.host)).toEqual([`rebind.fetch.test:${sitePort}`]);
    // Asked again, it now says 10.0.0.9, and the next fetch is refused for it.
    expect(await webFetch(`http://rebind.fetch.test:${sitePort}/`)).toMatchObject({ status: 403, body: { error: { type: 'blocked_address', message: expect.stringContaining('10.0.0.9') } } });
  });

  it('refuses a name with any private address, IPv6 included', async () => {
    expect(await webFetch('http://v6.fetch.test/')).toMatchObject({ status: 403, body: { error: { type: 'blocked_address', message: 'v6.fetch.test resolves to ::1, a private, local or reserved address; the proxy never fetches those.' } } });
    expect(await webFetch('http://ula.fetch.test/')).toMatchObject({ status: 403, body: { error: { message: expect.stringContaining('fd00::5') } } });
    // A redirect by name is checked the same way.
    expect(await webFetch(`http://site.fetch.test:${sitePort}/to-private`)).toMatchObject({ status: 403, body: { error: { message: expect.stringContaining('fd00::5') } } });
  });

  it('refuses, closed, a name that cannot be looked up or has no address, and sends nothing', async () => {
    expect(await webFetch('http://servfail.fetch.test/')).toMatchObject({ status: 502, body: { error: { type: 'upstream_unreachable', message: expect.stringContaining('could not be looked up') } } });
    expect(await webFetch('http://nowhere.fetch.test/')).toMatchObject({ status: 502, body: { error: { message: 'nowhere.fetch.test does not resolve to any address.' } } });
    expect(seen).toEqual([]);
  });
});

describe('remote MCP judges names the same way', () => {
  it('refuses an allowed MCP host whose name leads to a private IPv6 address, or cannot be looked up', async () => {
    const send = (target: string) =>
      fetch(`${proxy.url}/v1/mcp`, { method: 'POST', headers: { 'x-mcp-url': target, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    const v6 = await send('http://v6.fetch.test/mcp');
    expect(v6.status).toBe(403);
    expect(((await v6.json()) as { error: { message: string } }).error.message).toContain('resolves to ::1');
    const servfail = await send('http://servfail.fetch.test/mcp');
    expect(servfail.status).toBe(502);
    expect(((await servfail.json()) as { error: { message: string } }).error.message).toContain('could not be looked up');
  });
});
