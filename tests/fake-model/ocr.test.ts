// The fake Mistral OCR: its answers in Mistral's format, its admin routes, and the whole path the
// app uses (the worker's Mistral client -> the real proxy -> this fake).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../../cloudflare-proxy/local.mjs';
import { MistralOcrError, readWithMistral } from '../../worker/documents/mistral-ocr.ts';
import type { FakeOcrState } from './ocr.ts';
import { type FakeModel, startFakeModel } from './server.ts';

const PDF = new TextEncoder().encode('%PDF-1.7\nfake scan');
const dataUrl = (mime: string, bytes: Uint8Array) => `data:${mime};base64,${Buffer.from(bytes).toString('base64')}`;

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const postOcr = (body: unknown, headers: Record<string, string> = { authorization: 'Bearer fake-mistral-key' }) =>
  fetch(`${fake.url}/v1/ocr`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const ocrRequest = { model: 'mistral-ocr-latest', document: { type: 'document_url', document_url: dataUrl('application/pdf', PDF) }, include_image_base64: false };

describe('fake Mistral OCR', () => {
  it('answers with one page naming what it got, and records the request apart from the model requests', async () => {
    const response = await postOcr(ocrRequest);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      pages: [{ index: 0, markdown: `Fake Mistral OCR read application/pdf, ${PDF.byteLength} bytes.`, images: [], dimensions: { dpi: 200, height: 2200, width: 1700 } }],
      model: 'mistral-ocr-fake',
      usage_info: { pages_processed: 1, doc_size_bytes: PDF.byteLength },
    });
    expect(fake.ocr.state().requests).toEqual([
      { n: 1, authorization: 'Bearer fake-mistral-key', model: 'mistral-ocr-latest', document_type: 'document_url', mime: 'application/pdf', bytes: PDF.byteLength, include_image_base64: false, problem: null },
    ]);
    expect(fake.state()).toEqual({ requests: [], failures: [], remaining: 0 });
  });

  it('answers scripted pages or a scripted error, set over HTTP, until a reset', async () => {
    const set = await fetch(`${fake.url}/_fake/ocr`, { method: 'POST', body: JSON.stringify({ pages: ['# One', 'Two'] }) });
    expect(await set.json()).toEqual({ ok: true });
    const pages = (await (await postOcr(ocrRequest)).json()) as { pages: { index: number; markdown: string }[] };
    expect(pages.pages.map((page) => [page.index, page.markdown])).toEqual([[0, '# One'], [1, 'Two']]);

    await fetch(`${fake.url}/_fake/ocr`, { method: 'POST', body: JSON.stringify({ error: { status: 429, message: 'Slow down' } }) });
    const limited = await postOcr(ocrRequest);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ object: 'error', message: 'Slow down', type: 'api_error', param: null, code: null });

    const state = (await (await fetch(`${fake.url}/_fake/ocr`)).json()) as FakeOcrState;
    expect(state.requests).toHaveLength(2);
    expect(state.reply).toEqual({ error: { status: 429, message: 'Slow down' } });

    fake.load({ name: 'next test', turns: [] });
    expect(fake.ocr.state()).toEqual({ requests: [], reply: null });

    const bad = await fetch(`${fake.url}/_fake/ocr`, { method: 'POST', body: JSON.stringify({ pages: [1] }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_ocr_reply');
  });

  it('refuses a request without a key or in the wrong shape, and records why', async () => {
    expect((await postOcr(ocrRequest, {})).status).toBe(401);
    const wrong = await postOcr({ model: 'm', document: { type: 'document_url', document_url: 'https://example.com/x.pdf' } });
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { message: string }).message).toBe('fake Mistral OCR: document.document_url is not a base64 data URL');
    expect(fake.ocr.state().requests.map((r) => r.problem)).toEqual(['no Authorization: Bearer header', 'document.document_url is not a base64 data URL']);
  });
});

describe('the worker\'s Mistral client, through the real proxy, against the fake', () => {
  let proxy: LocalProxy;
  // Calls the proxy as this browser's paired device.
  let paired: typeof fetch;
  beforeAll(async () => {
    proxy = await startLocalProxy({ port: 0, mistralUpstream: fake.url, mistralApiKey: 'fake-mistral-key', localPairing: true });
    const { token } = (await (await fetch(`${proxy.url}/v1/pair/local`, { method: 'POST', body: '{}' })).json()) as { token: string };
    paired = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } });
  });
  afterAll(() => proxy?.dispose());

  it('reads scripted pages, with the proxy\'s key reaching the fake', async () => {
    fake.ocr.setReply({ pages: ['Blue Gum Supplies', 'Total 99.00\n\n![img-0.jpeg](img-0.jpeg)'] });
    const result = await readWithMistral(PDF, 'application/pdf', { endpoint: proxy.url, fetch: paired });
    expect(result).toEqual({ pages: ['Blue Gum Supplies', 'Total 99.00'], model: 'mistral-ocr-fake' });
    expect(fake.ocr.state().requests).toMatchObject([{ authorization: 'Bearer fake-mistral-key', document_type: 'document_url', mime: 'application/pdf', problem: null }]);
  });

  it('turns a Mistral error into a reason', async () => {
    fake.ocr.setReply({ error: { status: 500, message: 'Internal error' } });
    const error = await readWithMistral(new Uint8Array([0xff, 0xd8, 0xff]), 'image/jpeg', { endpoint: proxy.url, fetch: paired }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MistralOcrError);
    expect((error as Error).message).toBe('Mistral OCR answered 500: Internal error');
    expect(fake.ocr.state().requests[0]).toMatchObject({ document_type: 'image_url', mime: 'image/jpeg', bytes: 3 });
  });
});
