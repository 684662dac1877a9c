import { describe, expect, it } from 'vitest';
import { builtInEndpoints, connectSources, contentSecurityPolicy, LOCAL_PROXY, OWN_KEY_ENDPOINT } from './content-security-policy.ts';

const directives = (policy: string) => new Map(policy.split('; ').map((part) => [part.split(' ')[0]!, part.split(' ').slice(1)]));

describe('contentSecurityPolicy', () => {
  it('allows no inline script and no eval, only wasm', () => {
    const policy = directives(contentSecurityPolicy());
    expect(policy.get('script-src')).toEqual(["'self'", "'wasm-unsafe-eval'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(contentSecurityPolicy({ endpoints: ['https://a.example'], header: true })).not.toMatch(/'unsafe-eval'|script-src[^;]*'unsafe-inline'|\*/);
  });

  it('connects only to the app and the endpoints it is given, over HTTP and WebSocket alike', () => {
    expect(directives(contentSecurityPolicy()).get('connect-src')).toEqual(["'self'"]);
    expect(directives(contentSecurityPolicy({ endpoints: ['http://127.0.0.1:8787/', 'https://proxy.example.workers.dev/v1', 'https://proxy.example.workers.dev'] })).get('connect-src')).toEqual([
      "'self'",
      'http://127.0.0.1:8787',
      'ws://127.0.0.1:8787',
      'https://proxy.example.workers.dev',
      'wss://proxy.example.workers.dev',
    ]);
  });

  it('lets workers start from blob: (v86 starts its helpers so), and no other site frame the app', () => {
    expect(directives(contentSecurityPolicy()).get('worker-src')).toEqual(["'self'", 'blob:']);
    // A <meta> tag cannot carry frame-ancestors (Chromium warns and ignores it); a header does.
    expect(directives(contentSecurityPolicy()).has('frame-ancestors')).toBe(false);
    expect(directives(contentSecurityPolicy({ header: true })).get('frame-ancestors')).toEqual(["'none'"]);
  });
});

describe('connectSources', () => {
  it('is empty for what is not an http(s) address', () => {
    for (const bad of ['', 'not a url', 'javascript:alert(1)', 'ftp://a.example', "https://a.example'; script-src *"]) {
      expect(connectSources(bad).every((source) => /^(https?|wss?):\/\/[^\s;']+$/.test(source)), bad).toBe(true);
    }
    expect(connectSources('javascript:alert(1)')).toEqual([]);
    expect(connectSources('file:///etc/passwd')).toEqual([]);
  });
});

describe('builtInEndpoints', () => {
  it('names the proxy the build was made for, else the local one on this machine, and Anthropic', () => {
    expect(builtInEndpoints('https://proxy.example', 'app.example')).toEqual(['https://proxy.example', OWN_KEY_ENDPOINT]);
    expect(builtInEndpoints(undefined, '127.0.0.1')).toEqual([LOCAL_PROXY, OWN_KEY_ENDPOINT]);
    expect(builtInEndpoints('', 'localhost')).toEqual([LOCAL_PROXY, OWN_KEY_ENDPOINT]);
    expect(builtInEndpoints(undefined, 'app.example')).toEqual([OWN_KEY_ENDPOINT]);
    expect(builtInEndpoints(undefined, null)).toEqual([OWN_KEY_ENDPOINT]);
  });
});
