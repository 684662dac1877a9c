import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wholeBodyAsBlob } from './cache-as-blob.ts';

const didSucceed = (response: Response) => wholeBodyAsBlob.fetchDidSucceed!({ response, request: new Request('http://x/'), event: new Event('fetch') as never, state: {} });

describe('wholeBodyAsBlob', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/missing') return void response.writeHead(404, { 'content-type': 'text/plain' }).end('no such file');
      response.writeHead(200, 'Fine', { 'content-type': 'application/wasm', 'x-kept': 'yes' });
      response.end(Buffer.alloc(300_000, 7));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('hands on the same file, status and headers, read whole', async () => {
    const fetched = await fetch(`${base}/v86.wasm`);
    const kept = await didSucceed(fetched);
    expect(kept).not.toBe(fetched);
    expect(fetched.bodyUsed).toBe(true);
    expect([kept.status, kept.statusText, kept.headers.get('content-type'), kept.headers.get('x-kept')]).toEqual([200, 'Fine', 'application/wasm', 'yes']);
    // Cloned as workbox does: both copies whole.
    const [a, b] = await Promise.all([kept.clone().arrayBuffer(), kept.arrayBuffer()]);
    expect([a.byteLength, b.byteLength]).toEqual([300_000, 300_000]);
    expect(new Uint8Array(b).every((byte) => byte === 7)).toBe(true);
  });

  it('leaves a failed response as it came', async () => {
    const fetched = await fetch(`${base}/missing`);
    expect(await didSucceed(fetched)).toBe(fetched);
    expect(await fetched.text()).toBe('no such file');
  });
});
