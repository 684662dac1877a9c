import { describe, expect, it } from 'vitest';
import { LOCAL_PROXY, OWN_KEY_ENDPOINT } from '../app/security-policy/content-security-policy.ts';
import { DEFAULT_ENDPOINTS } from '../worker/settings.ts';
import { buildPolicy, pagesHeaders } from './content-security-policy.ts';

describe('the build\'s policy', () => {
  it('lets the workers reach the endpoints a new stack starts with', () => {
    // The app's defaults (worker/settings.ts, worker/open-stack.ts) and the policy's must agree,
    // or a new stack could not reach its model until the user chose it again.
    expect(OWN_KEY_ENDPOINT).toBe(DEFAULT_ENDPOINTS.anthropic);
    expect(LOCAL_PROXY).toBe('http://127.0.0.1:8787');
    expect(buildPolicy('https://proxy.example.workers.dev', false)).toContain("connect-src 'self' https://proxy.example.workers.dev wss://proxy.example.workers.dev https://api.anthropic.com wss://api.anthropic.com;");
    expect(buildPolicy(undefined, false)).toContain("connect-src 'self' https://api.anthropic.com wss://api.anthropic.com;");
  });

  it('writes dist/_headers for Cloudflare Pages: every path, the header form of the policy', () => {
    const lines = pagesHeaders('http://127.0.0.1:8787').split('\n');
    expect(lines[0]).toMatch(/^# /);
    expect(lines[1]).toBe('/*');
    expect(lines[2]).toBe(`  Content-Security-Policy: ${buildPolicy('http://127.0.0.1:8787', true)}`);
    expect(lines[2]).toContain("frame-ancestors 'none'");
    expect(lines[2]).toContain('ws://127.0.0.1:8787');
  });
});
