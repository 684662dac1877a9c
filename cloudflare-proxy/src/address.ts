// Which URLs web_fetch may load: http(s) only, never a local name or a private, loopback,
// link-local, shared or reserved address. Pure functions over WHATWG URLs, which already turn
// every IPv4 spelling (decimal 2130706433, hex 0x7f000001, octal 0177.0.0.1, short 127.1) into a
// dotted quad and every IPv6 spelling into its compressed hex form.

/** A refused URL: the proxy's error type and a sentence the model can read. */
export type Refusal = { type: 'invalid_url' | 'blocked_address'; message: string };

const LOCAL_SUFFIXES = ['localhost', 'local', 'internal', 'localdomain', 'home.arpa', 'lan', 'intranet', 'corp', 'home'];

/**
 * Why `url` may not be fetched, or null when it may. `allowHosts` holds exact `host:port` strings
 * (tests only) that pass although private; the scheme and credentials rules still apply to them.
 */
export function refuseUrl(url: URL, allowHosts: ReadonlySet<string>): Refusal | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { type: 'invalid_url', message: `Only http and https addresses can be fetched, not ${url.protocol}` };
  }
  if (url.username !== '' || url.password !== '') {
    return { type: 'invalid_url', message: 'Addresses with a user name or password in them are not fetched.' };
  }
  if (allowHosts.has(url.host)) return null;
  const reason = blockedHostReason(url.hostname);
  return reason === null ? null : { type: 'blocked_address', message: `${url.hostname} ${reason}; the proxy never fetches those.` };
}

/** Returns why a URL hostname (as `URL.hostname` gives it) is refused, or null. */
export function blockedHostReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host.startsWith('[')) return isPublicIpv6(host.slice(1, -1)) ? null : 'is a private, local or reserved IPv6 address';
  const v4 = parseIpv4(host);
  if (v4 !== null) return isPublicIpv4(v4) ? null : 'is a private, local or reserved IPv4 address';
  if (host === '' || !host.includes('.')) return 'is a single-label (local network) name';
  if (LOCAL_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`))) return 'is a local network name';
  return null;
}

function parseIpv4(host: string): number | null {
  const parts = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!parts) return null;
  const bytes = parts.slice(1).map(Number);
  if (bytes.some((byte) => byte > 255)) return null;
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

// [network, prefix length]: every IPv4 range that is not the public internet (IANA special-purpose
// registry): this network, RFC 1918, CGNAT, loopback, link-local (cloud metadata 169.254.169.254),
// IETF protocol assignments, TEST-NETs, 6to4 relay, benchmarking, multicast, reserved, broadcast.
const IPV4_BLOCKED: readonly [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

const IPV4_RANGES = IPV4_BLOCKED.map(([network, bits]) => {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { base: (parseIpv4(network)! & mask) >>> 0, mask };
});

function isPublicIpv4(address: number): boolean {
  return !IPV4_RANGES.some(({ base, mask }) => ((address & mask) >>> 0) === base);
}

/** Eight 16-bit groups, or null when `text` is not an IPv6 address (zone ids are not accepted). */
export function parseIpv6(text: string): number[] | null {
  let body = text.toLowerCase();
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(body);
  if (dotted) {
    const v4 = parseIpv4(dotted[2]!);
    if (v4 === null) return null;
    tail.push(v4 >>> 16, v4 & 0xffff);
    body = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  if ([...head, ...rest].some((group) => !/^[0-9a-f]{1,4}$/.test(group))) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = new Array<number>(8 - known).fill(0);
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail];
}

// Only global unicast (2000::/3) is public; inside it these are not. Everything outside 2000::/3
// is refused outright: ::/8 (unspecified, loopback, IPv4-mapped and -compatible), 64:ff9b::/96
// NAT64, 100::/64 discard, fc00::/7 ULA, fe80::/10 link-local, fec0::/10 site-local, ff00::/8
// multicast.
const IPV6_BLOCKED_IN_GLOBAL: readonly [number[], number][] = [
  [[0x2001, 0x0000], 23], // IETF protocol assignments, Teredo, benchmarking, ORCHID
  [[0x2001, 0x0db8], 32], // documentation
  [[0x2002], 16], // 6to4: the address inside may be private
  [[0x3fff, 0x0000], 20], // documentation
];

function isPublicIpv6(text: string): boolean {
  const groups = parseIpv6(text);
  if (groups === null) return false;
  if ((groups[0]! & 0xe000) !== 0x2000) return false;
  return !IPV6_BLOCKED_IN_GLOBAL.some(([prefix, bits]) => inPrefix(groups, prefix, bits));
}

function inPrefix(groups: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

// Cloudflare's own ranges (cloudflare.com/ips): a deployed Worker's connect() may not open
// sockets to them, so a site behind Cloudflare is fetched by name there (see pinned fetches).
const CLOUDFLARE_V4: readonly [string, number][] = [
  ['173.245.48.0', 20], ['103.21.244.0', 22], ['103.22.200.0', 22], ['103.31.4.0', 22], ['141.101.64.0', 18],
  ['108.162.192.0', 18], ['190.93.240.0', 20], ['188.114.96.0', 20], ['197.234.240.0', 22], ['198.41.128.0', 17],
  ['162.158.0.0', 15], ['104.16.0.0', 13], ['104.24.0.0', 14], ['172.64.0.0', 13], ['131.0.72.0', 22],
];
const CLOUDFLARE_V6: readonly [number[], number][] = [
  [[0x2400, 0xcb00], 32], [[0x2606, 0x4700], 32], [[0x2803, 0xf800], 32], [[0x2405, 0xb500], 32],
  [[0x2405, 0x8100], 32], [[0x2a06, 0x98c0], 29], [[0x2c0f, 0xf248], 32],
];

/** Whether an address (IPv4, or IPv6 without brackets) is one of Cloudflare's own. */
export function isCloudflareAddress(address: string): boolean {
  const v4 = parseIpv4(address);
  if (v4 !== null) {
    return CLOUDFLARE_V4.some(([network, bits]) => {
      const mask = (~0 << (32 - bits)) >>> 0;
      return ((v4 & mask) >>> 0) === ((parseIpv4(network)! & mask) >>> 0);
    });
  }
  const groups = parseIpv6(address);
  return groups !== null && CLOUDFLARE_V6.some(([prefix, bits]) => inPrefix(groups, prefix, bits));
}
