import { describe, expect, it } from 'vitest';
import { createProxyFetchPage, createWebFetchTool } from './web-fetch.ts';

const context = { signal: new AbortController().signal, tool_use_id: 't' };
const page = { final_url: 'https://example.com/', status: 200, content_type: 'text/html', title: 'Example', text: 'Hello world', truncated: false };

describe('web_fetch', () => {
  it('shows the model this schema', () => {
    expect(createWebFetchTool(async () => page).spec).toMatchSnapshot();
  });
  it('returns the page as marked data, cut to max_chars', async () => {
    const tool = createWebFetchTool(async () => ({ ...page, text: 'x'.repeat(1200) }));
    const result = await tool.execute({ url: 'https://example.com', max_chars: 1000 }, context);
    expect(result.content).toMatch(/^URL: https:\/\/example.com\/\nStatus: 200\nTitle: Example\n<page_text>\nx{1000}\n\[cut: 200 more characters/);
  });
  it('goes through the proxy and says plainly when it cannot', async () => {
    const calls: string[] = [];
    const ok = createProxyFetchPage(() => 'http://proxy.test', (async (url: string) => (calls.push(url), Response.json(page))) as typeof fetch);
    expect(await ok('https://example.com', context.signal)).toEqual(page);
    expect(calls).toEqual(['http://proxy.test/v1/fetch']);
    const blocked = createProxyFetchPage(() => 'http://proxy.test', (async () => Response.json({ type: 'error', error: { type: 'blocked_address', message: '10.0.0.1 is a private address' } }, { status: 403 })) as typeof fetch);
    await expect(blocked('http://10.0.0.1', context.signal)).rejects.toThrow('10.0.0.1 is a private address');
    const offline = createProxyFetchPage(() => 'http://proxy.test', (async () => { throw new TypeError('Failed to fetch'); }) as typeof fetch);
    await expect(offline('https://example.com', context.signal)).rejects.toThrow('you may be offline');
    const noProxy = createProxyFetchPage(() => null, fetch);
    await expect(noProxy('https://example.com', context.signal)).rejects.toThrow('web_fetch needs the Stackdocs proxy');
  });
});
