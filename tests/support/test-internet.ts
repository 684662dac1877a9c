// "The internet" for tests of the computer's network, on this machine: a DNS-over-HTTPS resolver
// with a small zone, a Python package index (PEP 503) serving one wheel the test builds, and an npm
// registry serving one package the test packs. The
// index listens on this machine's own network address, not loopback: inside the computer,
// 127.0.0.1 is the computer itself. Only the test configuration lets the proxy reach it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { zipSync, strToU8 } from 'fflate';

export interface TestInternet {
  /** The package index's address:port, for the proxy's NET_ALLOW_PRIVATE. */
  indexHost: string;
  /** `/files/10mb.bin` on the index: 10 MiB of seeded random bytes, and their SHA-256. */
  bigFileSha256: string;
  indexPort: number;
  /** The resolver's URL, for the proxy's DNS_UPSTREAM. */
  dnsUrl: string;
  /** Names: `pkg.index.test` (the index), `private.index.test` (10.0.0.5), `elsewhere.test` (the index, but not an allowed name). */
  close(): Promise<void>;
}

/** This machine's first non-loopback IPv4 address. */
export function machineAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (found) return found.address;
  }
  throw new Error('The network tests need a non-loopback IPv4 interface on this machine (the computer cannot reach the host through 127.0.0.1).');
}

/**
 * `tinynode` 1.0.0 packed as npm packs it (a gzipped tar whose entries sit under `package/`),
 * made with the system's tar at a fixed time so its bytes, and so its integrity, repeat.
 */
export function tinyNodePackage(): { tarball: Uint8Array; integrity: string; shasum: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tinynode-'));
  try {
    mkdirSync(join(dir, 'package'));
    writeFileSync(join(dir, 'package', 'package.json'), `${JSON.stringify({ name: 'tinynode', version: '1.0.0', main: 'index.js', license: 'MIT' }, null, 2)}\n`);
    writeFileSync(join(dir, 'package', 'index.js'), "exports.hello = () => 'tinynode says hi';\n");
    const file = join(dir, 'tinynode-1.0.0.tgz');
    execFileSync('tar', ['-I', 'gzip -n', '-cf', file, '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=2026-01-01 00:00Z', '-C', dir, 'package']);
    const tarball = new Uint8Array(readFileSync(file));
    return {
      tarball,
      integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
      shasum: createHash('sha1').update(tarball).digest('hex'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A pure-Python wheel, `tinypkg` 1.0, with a valid RECORD. */
export function tinyWheel(): { name: string; bytes: Uint8Array } {
  const files: Record<string, Uint8Array> = {
    'tinypkg/__init__.py': strToU8('VERSION = "1.0"\n\n\ndef hello():\n    return "tinypkg says hi"\n'),
    'tinypkg-1.0.dist-info/METADATA': strToU8('Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\nSummary: A package for the network tests\n'),
    'tinypkg-1.0.dist-info/WHEEL': strToU8('Wheel-Version: 1.0\nGenerator: stackdocs-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n'),
  };
  const record = Object.entries(files)
    .map(([path, bytes]) => `${path},sha256=${createHash('sha256').update(bytes).digest('base64url')},${bytes.length}`)
    .concat('tinypkg-1.0.dist-info/RECORD,,')
    .join('\n');
  files['tinypkg-1.0.dist-info/RECORD'] = strToU8(`${record}\n`);
  return { name: 'tinypkg-1.0-py3-none-any.whl', bytes: zipSync(files, { mtime: new Date('2026-01-01T00:00:00Z') }) };
}

async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

export async function startTestInternet(): Promise<TestInternet> {
  const address = machineAddress();
  const wheel = tinyWheel();
  const digest = createHash('sha256').update(wheel.bytes).digest('hex');
  const big = seededBytes(10 * 1024 * 1024);
  const node = tinyNodePackage();
  const index = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/simple/' || path === '/simple') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html><body><a href="tinypkg/">tinypkg</a></body></html>');
    if (path === '/simple/tinypkg/') {
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!DOCTYPE html><html><body><a href="/packages/${wheel.name}#sha256=${digest}">${wheel.name}</a></body></html>`);
    }
    if (path === `/packages/${wheel.name}`) return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': wheel.bytes.length }).end(wheel.bytes);
    // The npm registry's two answers: a package's document (tarball URLs on the name the client
    // asked for, so they go through the same resolver) and the tarball.
    if (path === '/npm/tinynode') {
      const tarball = `http://${req.headers.host}/npm/tinynode/-/tinynode-1.0.0.tgz`;
      const version = { name: 'tinynode', version: '1.0.0', main: 'index.js', license: 'MIT', dist: { tarball, integrity: node.integrity, shasum: node.shasum } };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'tinynode', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': version } }));
    }
    if (path === '/npm/tinynode/-/tinynode-1.0.0.tgz') return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': node.tarball.length }).end(node.tarball);
    if (path === '/files/10mb.bin') return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': big.length }).end(big);
    if (path === '/files/hello.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('hello\n');
    // A download that never ends (a byte a second): for connections cut while they are open.
    if (path === '/files/endless') {
      res.writeHead(200, { 'content-type': 'text/plain' }).write('started\n');
      const timer = setInterval(() => res.write('.'), 1000);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  const indexPort = await listen(index, address);

  const zone: Record<string, string> = { 'pkg.index.test': address, 'private.index.test': '10.0.0.5', 'elsewhere.test': address };
  const resolver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let query: dnsPacket.DecodedPacket;
      try {
        query = dnsPacket.decode(Buffer.concat(chunks));
      } catch {
        return void res.writeHead(400).end();
      }
      const question = query.questions?.[0];
      const found = question ? zone[question.name.toLowerCase()] : undefined;
      const reply = dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (found ? 0 : 3),
        questions: query.questions,
        answers: found && question?.type === 'A' ? [{ type: 'A', name: question.name, ttl: 300, data: found }] : [],
      });
      res.writeHead(200, { 'content-type': 'application/dns-message' }).end(reply);
    });
  });
  const resolverPort = await listen(resolver, '127.0.0.1');
  return {
    indexHost: `${address}:${indexPort}`,
    bigFileSha256: createHash('sha256').update(big).digest('hex'),
    indexPort,
    dnsUrl: `http://127.0.0.1:${resolverPort}/dns-query`,
    async close() {
      for (const server of [index, resolver]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

/** Incompressible test bytes, the same every run (xorshift32). */
function seededBytes(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
