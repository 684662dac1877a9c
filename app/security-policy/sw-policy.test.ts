import { describe, expect, it } from 'vitest';
import { createEndpointPolicy, MAX_CHOSEN_ENDPOINTS, POLICY_CACHE } from './sw-policy.ts';

/** Cache Storage as far as the policy uses it: entries by URL, kept across policies. */
function memoryCaches() {
  const stores = new Map<string, Map<string, string>>();
  const caches = {
    async open(name: string) {
      const store = stores.get(name) ?? new Map<string, string>();
      stores.set(name, store);
      return {
        async match(key: string) {
          const body = store.get(key);
          return body === undefined ? undefined : new Response(body);
        },
        async put(key: string, response: Response) {
          store.set(key, await response.text());
        },
      };
    },
  } as unknown as CacheStorage;
  return { caches, stores };
}

const SCOPE = 'https://app.example/some/path/';
const connectSrc = (header: string) => header.split('; ').find((part) => part.startsWith('connect-src '))!;

async function answer(policy: ReturnType<typeof createEndpointPolicy>, request: Request, response: Response): Promise<Response> {
  return (await policy.plugin.handlerWillRespond!({ request, response, event: new Event('fetch') as ExtendableEvent, state: {} }))!;
}

describe('createEndpointPolicy', () => {
  it('adds an endpoint the user chose to the policy, once, and keeps it for the next start', async () => {
    const { caches, stores } = memoryCaches();
    const policy = createEndpointPolicy({ caches, scope: SCOPE, builtIn: ['https://proxy.example'] });
    expect(connectSrc(await policy.header())).toBe("connect-src 'self' https://proxy.example wss://proxy.example");
    expect(await policy.allow('http://192.168.1.20:11434/v1')).toEqual({ ok: true, result: 'added' });
    expect(await policy.allow('http://192.168.1.20:11434/other')).toEqual({ ok: true, result: 'known' });
    expect(await policy.allow('https://proxy.example/v1')).toEqual({ ok: true, result: 'known' });
    expect(connectSrc(await policy.header())).toBe("connect-src 'self' https://proxy.example wss://proxy.example http://192.168.1.20:11434 ws://192.168.1.20:11434");
    expect([...stores.get(POLICY_CACHE)!.keys()]).toEqual(['https://app.example/some/path/policy/chosen-endpoints.json']);
    // A service worker that slept starts again from Cache Storage.
    const again = createEndpointPolicy({ caches, scope: SCOPE, builtIn: ['https://proxy.example'] });
    expect(connectSrc(await again.header())).toContain('http://192.168.1.20:11434');
  });

  it('refuses what is not an http(s) address, and keeps only the latest choices', async () => {
    const { caches } = memoryCaches();
    const policy = createEndpointPolicy({ caches, scope: SCOPE, builtIn: [] });
    expect(await policy.allow("https://a.example'; script-src 'unsafe-inline")).toMatchObject({ ok: false });
    expect(await policy.allow('javascript:alert(1)')).toEqual({ ok: false, message: expect.stringContaining('http:// or https://') });
    for (let i = 0; i < MAX_CHOSEN_ENDPOINTS + 3; i++) await policy.allow(`https://m${i}.example`);
    const sources = connectSrc(await policy.header());
    expect(sources).not.toContain('https://a.example ');
    expect(sources).not.toContain("'unsafe-inline'");
    expect(sources).not.toContain('https://m2.example ');
    expect(sources).toContain(`https://m${MAX_CHOSEN_ENDPOINTS + 2}.example`);
    expect(sources.split(' ').filter((source) => source.startsWith('https://'))).toHaveLength(MAX_CHOSEN_ENDPOINTS);
  });

  it('ignores a stored list that is not one', async () => {
    const { caches } = memoryCaches();
    await (await caches.open(POLICY_CACHE)).put(`${SCOPE}policy/chosen-endpoints.json`, new Response('{"https://evil.example": 1}'));
    const policy = createEndpointPolicy({ caches, scope: SCOPE, builtIn: [] });
    expect(connectSrc(await policy.header())).toBe("connect-src 'self'");
  });

  it('serves the page and worker scripts with the policy as a header, and nothing else', async () => {
    const { caches } = memoryCaches();
    const policy = createEndpointPolicy({ caches, scope: SCOPE, builtIn: ['https://proxy.example'] });
    await policy.allow('https://chosen.example');
    const html = await answer(policy, new Request(`${SCOPE}index.html`), new Response('<!doctype html>', { headers: { 'content-type': 'text/html; charset=utf-8' } }));
    expect(html.headers.get('content-security-policy')).toContain('https://chosen.example');
    expect(html.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await html.text()).toBe('<!doctype html>');
    const script = await answer(policy, new Request(`${SCOPE}assets/stack-worker-abc.js`), new Response('1', { headers: { 'content-type': 'text/javascript' } }));
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(script.headers.get('content-type')).toBe('text/javascript');
    const wasm = await answer(policy, new Request(`${SCOPE}assets/v86.wasm`), new Response('w', { headers: { 'content-type': 'application/wasm' } }));
    expect(wasm.headers.has('content-security-policy')).toBe(false);
  });
});
