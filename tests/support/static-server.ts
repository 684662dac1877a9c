// A plain static file server, as any host offers: files by path under a prefix, a content type by
// extension, no special headers, no rewriting. For checking that the built app runs from any path.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain',
  '.map': 'application/json',
};

export interface StaticServer {
  /** The served folder's URL, ending in "/". */
  url: string;
  /** Paths asked for that did not exist, e.g. "/assets/x.js" requested at the host's root. */
  missing: string[];
  /** Serves another folder from now on, as a host does when a new version is published. */
  publish(root: string): void;
  close(): Promise<void>;
}

/**
 * Serves `root` at `http://<hostname>:<port><prefix>`; `prefix` like "/some/sub/path/". The server
 * listens on 127.0.0.1; a `hostname` under `.localhost` reaches it too (browsers resolve those to
 * loopback and treat them as secure), and looks to the app like any other host.
 */
export async function serveStatic(root: string, prefix: string, hostname = '127.0.0.1'): Promise<StaticServer> {
  const missing: string[] = [];
  let served = root;
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const inside = path.startsWith(prefix) ? path.slice(prefix.length) : null;
    let file = inside === null ? null : normalize(join(served, inside || 'index.html'));
    if (file && existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!file || !file.startsWith(served) || !existsSync(file)) {
      missing.push(path);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}${prefix}`,
    missing,
    publish: (next) => void (served = next),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
