// The web_fetch address guard as pure functions, over Node's WHATWG URL parser (the same spec
// workerd follows; fetch.test.ts runs the same tables through the Worker itself).
import { describe, expect, it } from 'vitest';
import { blockedHostReason, parseIpv6, refuseUrl } from '../src/address.ts';
import { BLOCKED_URLS, INVALID_URLS, PUBLIC_URLS } from './address-cases.ts';

const none = new Set<string>();

describe('refuseUrl', () => {
  it.each(BLOCKED_URLS)('blocks %s', (url) => {
    expect(refuseUrl(new URL(url), none)).toMatchObject({ type: 'blocked_address' });
  });

  it.each(INVALID_URLS)('refuses %s as not fetchable', (url) => {
    expect(refuseUrl(new URL(url), none)).toMatchObject({ type: 'invalid_url' });
  });

  it.each(PUBLIC_URLS)('allows %s', (url) => {
    expect(refuseUrl(new URL(url), none)).toBeNull();
  });

  it('lets through exactly the allow-listed host:port, and only over http(s)', () => {
    const allow = new Set(['127.0.0.1:4000']);
    expect(refuseUrl(new URL('http://127.0.0.1:4000/page'), allow)).toBeNull();
    expect(refuseUrl(new URL('http://127.0.0.1:4001/page'), allow)).toMatchObject({ type: 'blocked_address' });
    expect(refuseUrl(new URL('http://localhost:4000/page'), allow)).toMatchObject({ type: 'blocked_address' });
    expect(refuseUrl(new URL('ftp://127.0.0.1:4000/'), allow)).toMatchObject({ type: 'invalid_url' });
  });

  it('names the host and says why', () => {
    expect(refuseUrl(new URL('http://169.254.169.254/'), none)?.message).toBe(
      '169.254.169.254 is a private, local or reserved IPv4 address; the proxy never fetches those.',
    );
    expect(blockedHostReason('printer.local')).toBe('is a local network name');
  });
});

describe('parseIpv6', () => {
  it.each([
    ['::1', [0, 0, 0, 0, 0, 0, 0, 1]],
    ['::', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['2001:db8::8:800:200c:417a', [0x2001, 0xdb8, 0, 0, 0x8, 0x800, 0x200c, 0x417a]],
    ['::ffff:10.0.0.1', [0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001]],
    ['64:ff9b::169.254.169.254', [0x64, 0xff9b, 0, 0, 0, 0, 0xa9fe, 0xa9fe]],
    ['1:2:3:4:5:6:7:8', [1, 2, 3, 4, 5, 6, 7, 8]],
  ])('reads %s', (text, groups) => {
    expect(parseIpv6(text)).toEqual(groups);
  });

  it.each(['1:2:3', '1::2::3', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9', '::1.2.3.256', 'fe80::1%eth0'])('rejects %s', (text) => {
    expect(parseIpv6(text)).toBeNull();
  });
});
