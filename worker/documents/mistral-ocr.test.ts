import { describe, expect, it } from 'vitest';
import { MISTRAL_OCR_MODEL, MistralOcrError, readWithMistral, toBase64 } from './mistral-ocr.ts';

const PDF = new TextEncoder().encode('%PDF-1.7\nscanned');
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

interface Call {
  url: string;
  init: RequestInit;
}

/** A fetch that records each call and answers with `answer` (a Response, or a thrown error). */
function fakeFetch(answer: () => Response | Promise<Response>): typeof fetch & { calls: Call[] } {
  const calls: Call[] = [];
  const fn = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return answer();
  }) as unknown as typeof fetch & { calls: Call[] };
  fn.calls = calls;
  return fn;
}

const ocrAnswer = (pages: { index: number; markdown: string }[]) =>
  Response.json({
    pages: pages.map((page) => ({ ...page, images: [], dimensions: { dpi: 200, height: 100, width: 100 } })),
    model: 'mistral-ocr-2505',
    usage_info: { pages_processed: pages.length, doc_size_bytes: 10 },
  });

const options = (fetchFn: typeof fetch) => ({ endpoint: 'http://proxy.test/', fetch: fetchFn, isOnline: () => true });

describe('readWithMistral', () => {
  it('sends a PDF as a document_url data URL to the proxy and returns the pages in order', async () => {
    const fetchFn = fakeFetch(() =>
      ocrAnswer([
        { index: 1, markdown: 'Page two\n\n![img-0.jpeg](img-0.jpeg)\n\n| a | b |' },
        { index: 0, markdown: '# ACME\n\nTotal 12.00' },
      ]),
    );
    const result = await readWithMistral(PDF, 'application/pdf', options(fetchFn));
    expect(result).toEqual({ pages: ['# ACME\n\nTotal 12.00', 'Page two\n\n| a | b |'], model: 'mistral-ocr-2505' });

    expect(fetchFn.calls).toHaveLength(1);
    const [call] = fetchFn.calls;
    expect(call?.url).toBe('http://proxy.test/v1/ocr');
    expect(call?.init.method).toBe('POST');
    expect(call?.init.headers).toEqual({ 'content-type': 'application/json' });
    expect(call?.init.credentials).toBe('omit');
    expect(JSON.parse(call?.init.body as string)).toEqual({
      model: MISTRAL_OCR_MODEL,
      document: { type: 'document_url', document_url: `data:application/pdf;base64,${Buffer.from(PDF).toString('base64')}` },
      include_image_base64: false,
    });
  });

  it('sends an image as an image_url', async () => {
    const fetchFn = fakeFetch(() => ocrAnswer([{ index: 0, markdown: 'Receipt' }]));
    expect((await readWithMistral(PNG, 'image/png', options(fetchFn))).pages).toEqual(['Receipt']);
    expect(JSON.parse(fetchFn.calls[0]?.init.body as string).document).toEqual({
      type: 'image_url',
      image_url: `data:image/png;base64,${Buffer.from(PNG).toString('base64')}`,
    });
  });

  it('says why, in a short clause, for each way it can fail', async () => {
    const failure = async (answer: () => Response | Promise<Response>, online = true) => {
      const error = await readWithMistral(PDF, 'application/pdf', { ...options(fakeFetch(answer)), isOnline: () => online }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MistralOcrError);
      return (error as Error).message;
    };
    const notConfigured = { type: 'error', error: { type: 'proxy_not_configured', message: 'This proxy has no Mistral API key, ...' } };
    expect(await failure(() => Response.json(notConfigured, { status: 503 }))).toBe('the proxy has no Mistral API key (MISTRAL_API_KEY)');
    const tooLarge = { type: 'error', error: { type: 'request_too_large', message: 'The OCR request is 41.0 MB; ...' } };
    expect(await failure(() => Response.json(tooLarge, { status: 413 }))).toBe('the proxy answered 413: The OCR request is 41.0 MB; ...');
    expect(await failure(() => Response.json({ object: 'error', message: 'Rate limit exceeded', type: 'rate_limited' }, { status: 429 }))).toBe(
      'Mistral OCR answered 429: Rate limit exceeded',
    );
    expect(await failure(() => Response.json({ detail: [{ msg: 'field required' }] }, { status: 422 }))).toBe(
      'Mistral OCR answered 422: [{"msg":"field required"}]',
    );
    expect(await failure(() => new Response('<html>Bad gateway</html>', { status: 502 }))).toBe('Mistral OCR answered 502');
    expect(await failure(() => new Response('not json', { status: 200 }))).toBe('http://proxy.test/v1/ocr answered with something other than Mistral OCR pages');
    expect(await failure(() => Response.json({ pages: [{ index: 0 }], model: 'm' }))).toMatch(/something other than Mistral OCR pages/);
    expect(await failure(() => ocrAnswer([]))).toBe('Mistral OCR returned no pages');
    const refused = () => Promise.reject(new TypeError('Failed to fetch'));
    expect(await failure(refused)).toBe('the Stackdocs proxy at http://proxy.test could not be reached');
    expect(await failure(refused, false)).toBe('this browser is offline');
  });

  it('gives up after its time limit', async () => {
    const hanging = (async (_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)))) as unknown as typeof fetch;
    await expect(readWithMistral(PDF, 'application/pdf', { ...options(hanging), timeoutMs: 50 })).rejects.toThrow('Mistral OCR did not answer within 0.05 s');
  });

  it('refuses a type it cannot send, without calling anything', async () => {
    const fetchFn = fakeFetch(() => ocrAnswer([]));
    await expect(readWithMistral(PNG, 'image/tiff', options(fetchFn))).rejects.toThrow('Mistral OCR does not read image/tiff here');
    expect(fetchFn.calls).toHaveLength(0);
  });
});

describe('toBase64', () => {
  it('matches Node for sizes around its slice boundary', () => {
    for (const size of [0, 1, 2, 3, 0x8000 - 1, 0x8000, 0x8000 + 1, 100_000]) {
      const bytes = new Uint8Array(size).map((_, i) => (i * 7919) & 0xff);
      expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    }
  });
});
