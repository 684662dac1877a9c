import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { DOH_SENTINEL, netDevice } from './emulator-options.ts';
import { installDnsBridge } from './dns-bridge.ts';
import type { DnsNotice } from './network.ts';

const query = (name: string) => new Uint8Array(dnsPacket.encode({ type: 'query', id: 42, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }));
const NETWORK = { relayUrl: 'ws://proxy.test/v1/wisp?ticket=t1', dnsUrl: 'http://proxy.test/dns-query', ticket: 't1' };

/** v86's own call: a POST to https://<doh_server>/dns-query with the raw query. */
async function lookUp(scope: { fetch: typeof fetch }, name: string) {
  const response = await scope.fetch(`https://${DOH_SENTINEL}/dns-query`, { method: 'POST', headers: [['content-type', 'application/dns-message']], body: query(name) });
  return dnsPacket.decode(Buffer.from(await response.arrayBuffer())) as dnsPacket.DecodedPacket & { rcode?: string };
}

function bridge(answer: (url: string, init?: RequestInit) => Promise<Response>) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const notices: DnsNotice[] = [];
  const scope = {
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      calls.push({ url: String(input), ...(init ? { init } : {}) });
      return answer(String(input), init);
    }) as typeof fetch,
  };
  const setNetwork = installDnsBridge(scope, (notice) => notices.push(notice));
  return { scope, calls, notices, setNetwork };
}

describe('the DNS bridge to the proxy', () => {
  it('sends the guest’s lookups to the proxy’s resolver with the ticket, and passes its answer back', async () => {
    const answer = dnsPacket.encode({ type: 'response', id: 42, questions: [{ type: 'A', name: 'pypi.org' }], answers: [{ type: 'A', name: 'pypi.org', ttl: 60, data: '151.101.0.223' }] });
    const { scope, calls, setNetwork } = bridge(async () => new Response(new Uint8Array(answer), { headers: { 'content-type': 'application/dns-message' } }));
    setNetwork(NETWORK);
    const reply = await lookUp(scope, 'pypi.org');
    expect(reply.answers?.map((a) => (a as { data: string }).data)).toEqual(['151.101.0.223']);
    expect(calls[0]!.url).toBe('http://proxy.test/dns-query');
    expect(new Headers(calls[0]!.init?.headers).get('authorization')).toBe('Bearer t1');
  });

  it('refuses at once, keeping the question, when offline, refused by the proxy, or the proxy cannot be reached; each says why', async () => {
    let mode: 'refused' | 'unpaired' | 'down' = 'refused';
    const { scope, notices, setNetwork } = bridge(async () => {
      if (mode === 'down') throw new TypeError('Failed to fetch');
      if (mode === 'unpaired') return Response.json({ error: { type: 'device_revoked' } }, { status: 401 });
      const refused = dnsPacket.encode({ type: 'response', id: 42, flags: 5, questions: [{ type: 'A', name: 'evil.example' }] });
      return new Response(new Uint8Array(refused), { headers: { 'content-type': 'application/dns-message', 'x-stackdocs-refused': 'evil.example is not a host this proxy lets the computer reach' } });
    });

    const offline = await lookUp(scope, 'pypi.org');
    expect([offline.rcode, offline.id, offline.questions?.[0]?.name, offline.answers]).toEqual(['REFUSED', 42, 'pypi.org', []]);
    setNetwork(NETWORK);
    expect((await lookUp(scope, 'evil.example')).rcode).toBe('REFUSED');
    mode = 'unpaired';
    expect((await lookUp(scope, 'pypi.org')).rcode).toBe('REFUSED');
    mode = 'down';
    expect((await lookUp(scope, 'pypi.org')).rcode).toBe('REFUSED');
    expect(notices).toEqual([
      { name: 'pypi.org', reason: 'the computer is offline (its network is off)' },
      { name: 'evil.example', reason: 'not allowed by the proxy: evil.example is not a host this proxy lets the computer reach' },
      { name: 'pypi.org', reason: 'the proxy no longer accepts this device (pair it again in Settings)' },
      { name: 'pypi.org', reason: 'the computer is offline (the proxy could not be reached)' },
    ]);
  });

  it('leaves every other request alone', async () => {
    const { scope, calls } = bridge(async () => new Response('image bytes'));
    expect(await (await scope.fetch('https://app.example/vm/abc/manifest.json')).text()).toBe('image bytes');
    expect(calls.map((c) => c.url)).toEqual(['https://app.example/vm/abc/manifest.json']);
  });

  it('always declares the same card; the relay only with a network', () => {
    expect(netDevice(null)).toEqual({ type: 'virtio', mtu: 65520 });
    expect(netDevice({ ...NETWORK, relayUrl: 'wss://proxy.example/v1/wisp?ticket=t' })).toEqual({ type: 'virtio', mtu: 65520, relay_url: 'wisps://proxy.example/v1/wisp?ticket=t', doh_server: DOH_SENTINEL });
  });
});
