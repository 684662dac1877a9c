// /v1/mcp in workerd (via Miniflare): the official SDK's client reaches a remote MCP server (the
// tests' register, Streamable HTTP on loopback) through the proxy when the owner allows its host;
// other hosts, private addresses and callers without a device are refused, and only the server's
// own headers (from x-mcp-headers) go upstream, never the device token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpMcpServer } from '../../tests/mcp/http-server.ts';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';
import { pairLocally } from './pair.ts';

let register: Awaited<ReturnType<typeof startHttpMcpServer>>;
let fake: FakeUpstream;
let proxy: LocalProxy;
let bare: LocalProxy;
let token = '';
let bareToken = '';

beforeAll(async () => {
  [register, fake] = await Promise.all([startHttpMcpServer(), startFakeUpstream()]);
  [proxy, bare] = await Promise.all([
    startLocalProxy({ port: 0, localPairing: true, mcpAllowedHosts: [new URL(register.url).host, new URL(fake.url).host, 'tools.example.com'] }),
    startLocalProxy({ port: 0, localPairing: true }),
  ]);
  [token, bareToken] = await Promise.all([pairLocally(proxy.url), pairLocally(bare.url)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([proxy?.dispose(), bare?.dispose(), register?.close(), fake?.close()]);
});

function send(via: LocalProxy, target: string, init: RequestInit = {}, auth = via === proxy ? token : bareToken) {
  const headers = new Headers(init.headers);
  headers.set('x-mcp-url', target);
  if (auth) headers.set('authorization', `Bearer ${auth}`);
  return fetch(`${via.url}/v1/mcp`, { method: 'POST', ...init, headers });
}

async function errorOf(response: Response): Promise<{ status: number; type: string; message: string }> {
  const body = (await response.json()) as { error: { type: string; message: string } };
  return { status: response.status, type: body.error.type, message: body.error.message };
}

describe('/v1/mcp', () => {
  it("carries the SDK client's Streamable HTTP to an allowed server: tools listed and called", async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${proxy.url}/v1/mcp`), {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('x-mcp-url', register.url);
        headers.set('authorization', `Bearer ${token}`);
        return fetch(input, { ...init, headers });
      },
    });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['fail', 'vat_number', 'wait']);
    const result = await client.callTool({ name: 'vat_number', arguments: { company: 'Acme Ltd' } });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Acme Ltd: GB\d{9} \(pid \d+\)$/) }]);
    await client.close();
  });

  it('refuses a host the owner did not allow, and every host when the owner allowed none', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(await errorOf(await send(proxy, 'http://127.0.0.1:1/mcp', { body }))).toMatchObject({ status: 403, type: 'blocked_address', message: expect.stringContaining('127.0.0.1:1 is not one of the MCP servers this proxy\'s owner allows') });
    expect(await errorOf(await send(bare, register.url, { body }))).toMatchObject({ status: 403, message: expect.stringContaining("this proxy's owner allows no remote MCP servers") });
    expect(await errorOf(await send(proxy, 'not a url', { body }))).toMatchObject({ status: 400, type: 'invalid_url' });
  });

  it('needs a paired device', async () => {
    const response = await send(proxy, register.url, { body: '{}' }, '');
    expect(response.status).toBe(401);
    await response.body?.cancel();
  });

  it("sends the server's own headers and the transport's, never the device token or the caller's others", async () => {
    fake.respond((_request, response) => void response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-7' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
    const response = await send(proxy, `${fake.url}/mcp`, {
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', cookie: 'a=b', 'x-mcp-headers': JSON.stringify({ Authorization: 'Bearer server-key-1' }) },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBe('session-7');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const sent = fake.received.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer server-key-1');
    expect(sent.headers['mcp-protocol-version']).toBe('2025-11-25');
    expect(sent.headers.cookie).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain(token);
    // A header the proxy keeps for itself is refused, not sent.
    const refused = await send(proxy, `${fake.url}/mcp`, { body: '{}', headers: { 'x-mcp-headers': JSON.stringify({ Host: 'elsewhere.example' }) } });
    expect(await errorOf(refused)).toMatchObject({ status: 400, message: 'The MCP server header "Host" cannot be sent.' });
  });

  it('does not follow a redirect', async () => {
    fake.respond((_request, response) => void response.writeHead(307, { location: 'http://169.254.169.254/latest' }).end());
    expect(await errorOf(await send(proxy, `${fake.url}/mcp`, { body: '{}' }))).toMatchObject({ status: 502, message: expect.stringContaining('redirected (HTTP 307)') });
  });
});
