// POST /v1/ocr in workerd (via Miniflare) against a local fake of the Mistral API: the key goes
// upstream as a bearer token and nowhere else, the body byte for byte, answers come back as they
// are, and a missing key, an oversized body or a dead upstream each get a clear error.
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { pairLocally } from './pair.ts';
import { MAX_OCR_REQUEST_BYTES, OCR_NOT_CONFIGURED_MESSAGE, OCR_UPSTREAM_UNREACHABLE_MESSAGE } from '../src/mistral.ts';
import { startFakeUpstream, unusedPortUrl, type FakeUpstream } from './fake-upstream.ts';

const MISTRAL_KEY = 'mistral-test-key-456';
const ANTHROPIC_KEY = 'anthropic-test-key-123';
const APP_ORIGIN = 'http://localhost:4173';

const TRANSPORT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'accept-encoding', 'cf-worker']);

const OCR_ANSWER = {
  pages: [{ index: 0, markdown: '# ACME Pty Ltd\n\nTotal: 12.00', images: [], dimensions: { dpi: 200, height: 2200, width: 1700 } }],
  model: 'mistral-ocr-2505',
  usage_info: { pages_processed: 1, doc_size_bytes: 1234 },
};

let mistral: FakeUpstream;
let proxy: LocalProxy;
let token: string;

beforeAll(async () => {
  mistral = await startFakeUpstream();
  proxy = await startLocalProxy({
    port: 0,
    apiKey: ANTHROPIC_KEY,
    mistralUpstream: mistral.url,
    mistralApiKey: MISTRAL_KEY,
    allowedOrigins: [APP_ORIGIN],
    localPairing: true,
    deviceRequestsPerMinute: 10_000,
  });
  token = await pairLocally(proxy.url);
});

afterAll(async () => {
  await proxy?.dispose();
  await mistral?.close();
});

afterEach(() => {
  mistral.received.length = 0;
  mistral.respond((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

function ocrBody(data = 'JVBERi0xLjcK'): string {
  return JSON.stringify({
    model: 'mistral-ocr-latest',
    document: { type: 'document_url', document_url: `data:application/pdf;base64,${data}` },
    include_image_base64: false,
  });
}

function postOcr(base: string, init: { headers?: Record<string, string>; body?: BodyInit; token?: string } = {}) {
  return fetch(`${base}/v1/ocr`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${init.token ?? token}`, ...init.headers },
    body: init.body ?? ocrBody(),
    ...(init.body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/**
 * A request that declares a body over the cap but sends only its first bytes: the proxy must
 * answer from the content-length alone (a client still writing 41 MB would see the connection
 * close under it, which says nothing about the answer).
 */
function postDeclaredOversize(base: string, declared: number): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/v1/ocr`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(declared), authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      });
    });
    // Headers only: the proxy must answer from the content-length without waiting for the body.
    request.on('error', reject);
    request.flushHeaders();
  });
}

/** Streams 1 MB chunks with no content-length until the proxy answers (or `limit` bytes went). */
function postStreamedUntilAnswered(base: string, limit: number): Promise<{ status: number; body: { error: { message: string } } }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest(`${base}/v1/ocr`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', authorization: `Bearer ${token}` } }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      });
    });
    // Once the proxy has answered, it may close the connection under the rest: not a failure.
    request.on('error', (error) => (answered ? undefined : reject(error)));
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    const pump = () => {
      while (!answered && sent <= limit) {
        sent += chunk.byteLength;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      if (!answered) request.end();
    };
    pump();
  });
}

function errorBody(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

describe('POST /v1/ocr', () => {
  it('sends the body byte for byte with the Mistral key as a bearer token, and nothing of the caller', async () => {
    mistral.respond((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'a=b', 'x-internal': 'no' }).end(JSON.stringify(OCR_ANSWER));
    });
    const body = ocrBody('aGVsbG8g8J+Riw==');
    const response = await postOcr(proxy.url, {
      body,
      headers: { origin: APP_ORIGIN, cookie: 'session=should-not-leak', 'x-api-key': 'nope' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(OCR_ANSWER);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(response.headers.get('x-internal')).toBeNull();
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);

    expect(mistral.received).toHaveLength(1);
    const [received] = mistral.received;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/v1/ocr');
    expect(received?.body.toString('utf8')).toBe(body);
    const headers = Object.fromEntries(Object.entries(received?.headers ?? {}).filter(([name]) => !TRANSPORT_HEADERS.has(name)));
    expect(headers).toEqual({ 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${MISTRAL_KEY}` });
  });

  it('passes Mistral errors through with their status, body and retry hint', async () => {
    const body = '{"object":"error","message":"Rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}';
    mistral.respond((_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' }).end(body);
    });
    const limited = await postOcr(proxy.url, { headers: { origin: APP_ORIGIN } });
    expect(limited.status).toBe(429);
    expect(await limited.text()).toBe(body);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.headers.get('access-control-expose-headers')).toBe('retry-after');

    mistral.respond((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"detail":"Unauthorized"}');
    });
    const refused = await postOcr(proxy.url);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ detail: 'Unauthorized' });
  });

  it('answers a preflight from the app', async () => {
    const response = await fetch(`${proxy.url}/v1/ocr`, {
      method: 'OPTIONS',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toContain('content-type');
  });

  it('refuses a body over the cap, told by content-length or by the bytes, before calling Mistral', async () => {
    const limitMb = MAX_OCR_REQUEST_BYTES / (1024 * 1024);
    const declared = await postDeclaredOversize(proxy.url, MAX_OCR_REQUEST_BYTES + 1024 * 1024);
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual(
      errorBody('request_too_large', `The OCR request is 41.0 MB; this proxy accepts OCR requests up to ${limitMb} MB. Send a smaller document, or read it in the browser.`),
    );

    // Streamed without a content-length: the proxy counts what arrives.
    const streamed = await postStreamedUntilAnswered(proxy.url, MAX_OCR_REQUEST_BYTES + 2 * 1024 * 1024);
    expect(streamed.status).toBe(413);
    expect(streamed.body.error.message).toBe(
      `The OCR request is over ${limitMb} MB; this proxy accepts OCR requests up to ${limitMb} MB. Send a smaller document, or read it in the browser.`,
    );
    expect(mistral.received).toHaveLength(0);

    // Just under the cap still goes through.
    const fits = await postOcr(proxy.url, { body: new Uint8Array(MAX_OCR_REQUEST_BYTES) });
    expect(fits.status).toBe(200);
    expect(mistral.received[0]?.body.byteLength).toBe(MAX_OCR_REQUEST_BYTES);
  });

  it('reports the Mistral key in /health without revealing it', async () => {
    const response = await fetch(`${proxy.url}/health`);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ ok: true, anthropic: true, mistral: true, pairing: 'local' });
    expect(text).not.toContain(MISTRAL_KEY);
  });
});

describe('POST /v1/ocr misconfigured or cut off', () => {
  it('answers 503 proxy_not_configured without a Mistral key, while messages still work', async () => {
    const anthropic = await startFakeUpstream();
    const noMistral = await startLocalProxy({ port: 0, upstream: anthropic.url, apiKey: ANTHROPIC_KEY, mistralUpstream: mistral.url, allowedOrigins: [APP_ORIGIN], localPairing: true, deviceRequestsPerMinute: 10_000 });
    try {
      const device = await pairLocally(noMistral.url);
      const response = await postOcr(noMistral.url, { headers: { origin: APP_ORIGIN }, token: device });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual(errorBody('proxy_not_configured', OCR_NOT_CONFIGURED_MESSAGE));
      expect(OCR_NOT_CONFIGURED_MESSAGE).toContain('wrangler secret put MISTRAL_API_KEY');
      expect(response.headers.get('x-should-retry')).toBe('false');
      expect(mistral.received).toHaveLength(0);

      expect(await (await fetch(`${noMistral.url}/health`)).json()).toEqual({ ok: true, anthropic: true, mistral: false, pairing: 'local' });
      const messages = await fetch(`${noMistral.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${device}` }, body: '{}' });
      expect(messages.status).toBe(200);
    } finally {
      await noMistral.dispose();
      await anthropic.close();
    }
  });

  it('answers 502 with a fixed message when Mistral cannot be reached', async () => {
    const down = await startLocalProxy({ port: 0, mistralUpstream: await unusedPortUrl(), mistralApiKey: MISTRAL_KEY, localPairing: true, deviceRequestsPerMinute: 10_000 });
    try {
      const response = await postOcr(down.url, { token: await pairLocally(down.url) });
      expect(response.status).toBe(502);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual(errorBody('proxy_upstream_unreachable', OCR_UPSTREAM_UNREACHABLE_MESSAGE));
      expect(text).not.toContain(MISTRAL_KEY);
    } finally {
      await down.dispose();
    }
  });
});
