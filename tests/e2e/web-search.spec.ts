// web_search, end to end: the scripted model searches through a proxy whose owner configured a
// search API (a fake Brave Search on loopback), and its reply cites the result as a link; through
// the suite's proxy, which has no search configured, the model hears that plainly.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalProxy } from '../../cloudflare-proxy/local.mjs';
import { assistant, openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';
import { E2E_APP_URL, E2E_PROXY_SECRET } from './ports.ts';
import { expect, test } from './test.ts';

const SEARCH_KEY = 'fake-search-key-3e1d';

/** A search API that answers as Brave Search's web endpoint does, for the right key only. */
async function fakeBrave(): Promise<{ url: string; queries: string[]; close(): Promise<void> }> {
  const queries: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/res/v1/web/search' || req.headers['x-subscription-token'] !== SEARCH_KEY) return void res.writeHead(401).end();
    queries.push(url.searchParams.get('q') ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        web: {
          results: [
            { title: 'Acme GmbH — <strong>VAT</strong> register entry', url: 'https://register.example/acme', description: 'Acme GmbH, Berlin: <strong>VAT</strong> ID DE123456789.' },
            { title: 'Acme', url: 'https://acme.example/', description: 'The company’s own site.' },
          ],
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    queries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

test('the agent searches the web through the proxy and cites what it found', async ({ page }) => {
  const brave = await fakeBrave();
  const proxy = await startLocalProxy({
    port: 0,
    upstream: process.env.E2E_FAKE_URL!,
    apiKey: E2E_PROXY_SECRET,
    allowedOrigins: [E2E_APP_URL],
    localPairing: true,
    searchApiKey: SEARCH_KEY,
    searchUpstream: brave.url,
  });
  try {
    await loadScript({
      name: 'web search',
      turns: [
        { reply: { content: [{ type: 'tool_use', name: 'web_search', input: { query: 'Acme GmbH VAT number' } }] } },
        {
          expect: { tool_result: { contains: '1. Acme GmbH — VAT register entry\n   https://register.example/acme\n   Acme GmbH, Berlin: VAT ID DE123456789.' } },
          reply: { content: [{ type: 'text', text: 'Acme GmbH’s VAT ID is DE123456789 ([Acme GmbH — VAT register entry](https://register.example/acme)).' }] },
        },
      ],
    });
    await openApp(page);
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('textbox', { name: 'Model endpoint' }).fill(proxy.url);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('dialog')).toBeHidden();
    await expect(page.locator('.model-banner')).toHaveCount(0); // paired by itself

    await send(page, 'find the VAT number of Acme GmbH');
    const link = assistant(page).last().getByRole('link', { name: 'Acme GmbH — VAT register entry' });
    await expect(link).toHaveAttribute('href', 'https://register.example/acme');
    await expect(assistant(page).last()).toContainText('DE123456789');
    expect(brave.queries).toEqual(['Acme GmbH VAT number']);
    expect((await fakeState()).failures).toEqual([]);
  } finally {
    await proxy.dispose();
    await brave.close();
  }
});

test('with no search configured on the proxy, the model hears so at once', async ({ page }) => {
  await loadScript({
    name: 'web search not configured',
    turns: [
      { reply: { content: [{ type: 'tool_use', name: 'web_search', input: { query: 'anything' } }] } },
      {
        expect: { tool_result: { contains: 'Web search is not configured on this proxy', is_error: true } },
        reply: { content: [{ type: 'text', text: 'Web search is not set up on your proxy.' }] },
      },
    ],
  });
  await openApp(page);
  await send(page, 'search the web for anything');
  await expect(assistant(page).last()).toHaveText('Web search is not set up on your proxy.');
  expect((await fakeState()).failures).toEqual([]);
});
