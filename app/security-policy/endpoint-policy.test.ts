import { describe, expect, it } from 'vitest';
import { allowEndpoint, hostSendsPolicy, mustRestartFor } from './endpoint-policy.ts';

const memory = () => {
  const map = new Map<string, string>();
  return { getItem: (key: string) => map.get(key) ?? null, setItem: (key: string, value: string) => void map.set(key, value) };
};

describe('mustRestartFor', () => {
  it('restarts a stack whose workers came from the service worker without the endpoint, once per origin', () => {
    const seen = memory();
    expect(mustRestartFor('http://10.0.0.5:11434/v1', { ok: true, result: 'added' }, true, seen)).toBe(true);
    // A policy that still refused it after the restart cannot reload the page in a loop.
    expect(mustRestartFor('http://10.0.0.5:11434/other', { ok: true, result: 'added' }, true, seen)).toBe(false);
    expect(mustRestartFor('https://b.example', { ok: true, result: 'added' }, true, seen)).toBe(true);
  });

  it('leaves alone workers that could reach it, or that the service worker did not serve', () => {
    expect(mustRestartFor('https://a.example', { ok: true, result: 'known' }, true, memory())).toBe(false);
    expect(mustRestartFor('https://a.example', { ok: true, result: 'added' }, false, memory())).toBe(false);
    expect(mustRestartFor('https://a.example', { ok: false, message: 'no' }, true, memory())).toBe(false);
    expect(mustRestartFor('https://a.example', null, true, memory())).toBe(false);
  });
});

describe('allowEndpoint', () => {
  it('asks the active service worker and returns its answer', async () => {
    const posted: unknown[] = [];
    const active = {
      postMessage(message: unknown, [port]: MessagePort[]) {
        posted.push(message);
        port!.postMessage({ ok: true, result: 'added' });
      },
    };
    const container = { ready: Promise.resolve({ active }) } as unknown as ServiceWorkerContainer;
    expect(await allowEndpoint('https://a.example/v1', container)).toEqual({ ok: true, result: 'added' });
    expect(posted).toEqual([{ type: 'ALLOW_ENDPOINT', endpoint: 'https://a.example/v1' }]);
  });

  it('is null with no service worker', async () => {
    expect(await allowEndpoint('https://a.example', null)).toBeNull();
  });
});

describe('hostSendsPolicy', () => {
  it('says whether the host sends the policy as a header, and no when it cannot tell', async () => {
    globalThis.location ??= { href: 'https://app.example/' } as Location;
    const answering = (headers: Record<string, string>) => (async () => new Response(null, { headers })) as unknown as typeof fetch;
    expect(await hostSendsPolicy(answering({ 'content-security-policy': "default-src 'self'" }))).toBe(true);
    expect(await hostSendsPolicy(answering({}))).toBe(false);
    expect(await hostSendsPolicy((async () => Promise.reject(new TypeError('offline'))) as unknown as typeof fetch)).toBe(false);
  });
});
