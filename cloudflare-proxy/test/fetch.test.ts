// POST /v1/fetch under Miniflare against local pages: text out of HTML, redirects re-checked,
// private addresses refused, size and time limits, no caller headers forwarded.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';

let site: Server;
let siteHost = '';
let proxy: LocalProxy;
const seenHeaders: Record<string, string | string[] | undefined>[] = [];

beforeAll(async () => {
  site = createServer((req, res) => {
    seenHeaders.push(req.headers);
    const path = req.url ?? '/';
    if (path === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        '<html><head><title>Invoices &amp; more</title><style>p{}</style></head><body><nav>menu</nav><h1>Welcome</h1><p>Total: &euro;12 &lt;net&gt;</p><ul><li>One</li><li>Two</li></ul><a href="https://example.com/x">a link</a><script>evil()</script></body></html>',
      );
    } else if (path === '/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    else if (path === '/to-page') res.writeHead(302, { location: '/page' }).end();
    else if (path === '/to-private') res.writeHead(302, { location: 'http://10.0.0.1/secret' }).end();
    else if (path === '/loop') res.writeHead(302, { location: '/loop' }).end();
    else if (path === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(6 * 1024 * 1024));
    else if (path === '/pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.7');
    else if (path === '/slow') setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 3000);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  proxy = await startLocalProxy({ port: 0, allowedOrigins: ['http://localhost:4173'], webFetchAllowHosts: [siteHost], webFetchTimeoutMs: 1000 });
});

afterAll(async () => {
  await proxy?.dispose();
  await new Promise<void>((resolve) => site.close(() => resolve()));
});

const fetchVia = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${proxy.url}/v1/fetch`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ url }) });

describe('POST /v1/fetch', () => {
  it('turns a page into readable text, following a redirect, forwarding none of the caller\'s headers', async () => {
    const response = await fetchVia(`http://${siteHost}/to-page`, { cookie: 'session=secret', authorization: 'Bearer x' });
    expect(response.status).toBe(200);
    const page = await response.json();
    expect(page).toMatchObject({ final_url: `http://${siteHost}/page`, status: 200, content_type: 'text/html', title: 'Invoices & more', truncated: false });
    expect(page.text).toBe('# Welcome\n\nTotal: €12 <net>\n\n- One\n- Two\na link (https://example.com/x)');
    const last = seenHeaders.at(-1)!;
    expect(last.cookie).toBeUndefined();
    expect(last.authorization).toBeUndefined();
    expect(last['user-agent']).toBe('StackdocsFetch/1.0');
  });

  it('passes JSON through as text', async () => {
    expect(await (await fetchVia(`http://${siteHost}/json`)).json()).toMatchObject({ text: '{"ok":true}', content_type: 'application/json' });
  });

  it.each([
    ['http://127.0.0.1:9/', 403],
    ['http://localhost/', 403],
    ['http://10.1.2.3/', 403],
    ['http://192.168.0.1/', 403],
    ['http://169.254.169.254/latest/meta-data', 403],
    ['http://[::1]/', 403],
    ['http://[::ffff:127.0.0.1]/', 403],
    ['http://0x7f000001/', 403],
    ['http://2130706433/', 403],
    ['http://printer.local/', 403],
    ['file:///etc/passwd', 403],
    ['not a url', 400],
  ])('refuses %s', async (url, status) => {
    expect((await fetchVia(url)).status).toBe(status);
  });

  it('re-checks every redirect hop', async () => {
    const response = await fetchVia(`http://${siteHost}/to-private`);
    expect(response.status).toBe(403);
    expect((await response.json()).error).toMatchObject({ type: 'blocked_address' });
    expect((await (await fetchVia(`http://${siteHost}/loop`)).json()).error).toMatchObject({ type: 'too_many_redirects' });
  });

  it('caps the size, refuses non-text, and gives up on a slow page', async () => {
    const big = await (await fetchVia(`http://${siteHost}/big`)).json();
    expect(big.truncated).toBe(true);
    expect(big.text.length).toBe(5 * 1024 * 1024);
    expect((await (await fetchVia(`http://${siteHost}/pdf`)).json()).error).toMatchObject({ type: 'unsupported_content_type' });
    const slow = await fetchVia(`http://${siteHost}/slow`);
    expect(slow.status).toBe(504);
  });

  it('keeps the origin rules of the other routes', async () => {
    expect((await fetchVia(`http://${siteHost}/json`, { origin: 'https://evil.example' })).status).toBe(403);
  });
});
