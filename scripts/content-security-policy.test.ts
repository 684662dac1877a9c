import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from './content-security-policy.ts';

const directives = (policy: string) => new Map(policy.split('; ').map((part) => [part.split(' ')[0]!, part.split(' ').slice(1)]));

describe('contentSecurityPolicy', () => {
  it('allows no inline script and no eval, only wasm', () => {
    const policy = directives(contentSecurityPolicy());
    expect(policy.get('script-src')).toEqual(["'self'", "'wasm-unsafe-eval'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(contentSecurityPolicy()).not.toMatch(/'unsafe-eval'|script-src[^;]*'unsafe-inline'|\*/);
  });

  it('connects only to the app and the proxy it was built for', () => {
    expect(directives(contentSecurityPolicy()).get('connect-src')).toEqual(["'self'"]);
    expect(directives(contentSecurityPolicy('http://127.0.0.1:8787/')).get('connect-src')).toEqual(["'self'", 'http://127.0.0.1:8787']);
    expect(directives(contentSecurityPolicy('https://proxy.example.workers.dev/v1')).get('connect-src')).toEqual(["'self'", 'https://proxy.example.workers.dev']);
  });
});
