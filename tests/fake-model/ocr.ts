// A fake of Mistral's POST /v1/ocr beside the fake Anthropic API, so the app's "read scans with
// Mistral OCR" path runs end to end (through the real proxy) without Mistral. It answers in
// Mistral's format, with scripted pages or an error, and records each request for assertions.

/** How OCR requests are answered until the next reset; set with POST /_fake/ocr. */
export type FakeOcrReply =
  /** One markdown text per page, the same for every request. */
  | { pages: string[] }
  /** A Mistral-shaped error: `{"object":"error","message","type","param":null,"code":null}`. */
  | { error: { status: number; message?: string; type?: string } };

export interface OcrRecord {
  /** 1-based count since the last reset. */
  n: number;
  /** The Authorization header as received (the proxy's fake Mistral key), or null. */
  authorization: string | null;
  model: string | null;
  /** `document_url` or `image_url`, as the request said. */
  document_type: string | null;
  /** From the data URL, e.g. `application/pdf`. */
  mime: string | null;
  /** Decoded size of the document. */
  bytes: number;
  include_image_base64: boolean | null;
  /** What was wrong with the request (it got a 422 or 401), or null. */
  problem: string | null;
}

export interface FakeOcrState {
  requests: OcrRecord[];
  reply: FakeOcrReply | null;
}

export interface FakeOcr {
  /** Answers one POST /v1/ocr. */
  answer(headers: Record<string, string>, body: unknown): { status: number; body: unknown };
  /** Sets the reply, or with null goes back to the default (one page naming what was sent). */
  setReply(reply: FakeOcrReply | null): void;
  state(): FakeOcrState;
  reset(): void;
}

/** Checks a reply posted to /_fake/ocr; throws with what is wrong. */
export function parseOcrReply(value: unknown): FakeOcrReply | null {
  if (value === null) return null;
  const reply = value as Partial<{ pages: unknown; error: { status?: unknown; message?: unknown; type?: unknown } }>;
  if (Array.isArray(reply?.pages) && reply.pages.every((page) => typeof page === 'string')) return { pages: reply.pages as string[] };
  const error = reply?.error;
  if (error && typeof error.status === 'number' && Number.isInteger(error.status) && error.status >= 400 && error.status <= 599) {
    return {
      error: {
        status: error.status,
        ...(typeof error.message === 'string' ? { message: error.message } : {}),
        ...(typeof error.type === 'string' ? { type: error.type } : {}),
      },
    };
  }
  throw new Error('invalid fake OCR reply: expected {"pages": ["markdown", ...]}, {"error": {"status": 400-599, "message"?}} or null');
}

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/;

function mistralError(status: number, message: string, type: string) {
  return { status, body: { object: 'error', message, type, param: null, code: null } };
}

export function createFakeOcr(): FakeOcr {
  let requests: OcrRecord[] = [];
  let reply: FakeOcrReply | null = null;

  return {
    answer(headers, body) {
      const request = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
      const source = (typeof request['document'] === 'object' && request['document'] !== null ? request['document'] : {}) as Record<string, unknown>;
      const type = typeof source['type'] === 'string' ? source['type'] : null;
      const url = type === 'document_url' || type === 'image_url' ? source[type] : undefined;
      const data = typeof url === 'string' ? DATA_URL.exec(url) : null;
      const record: OcrRecord = {
        n: requests.length + 1,
        authorization: headers['authorization'] ?? null,
        model: typeof request['model'] === 'string' ? request['model'] : null,
        document_type: type,
        mime: data?.[1] ?? null,
        bytes: data ? Buffer.from(data[2] ?? '', 'base64').byteLength : 0,
        include_image_base64: typeof request['include_image_base64'] === 'boolean' ? request['include_image_base64'] : null,
        problem: null,
      };
      requests.push(record);

      if (!record.authorization?.startsWith('Bearer ')) {
        record.problem = 'no Authorization: Bearer header';
        return { status: 401, body: { message: 'Unauthorized', request_id: `ocr_fake_${record.n}` } };
      }
      if (typeof body !== 'object' || body === null) record.problem = 'the body is not a JSON object';
      else if (record.model === null) record.problem = 'no "model"';
      else if (type !== 'document_url' && type !== 'image_url') record.problem = 'document.type is neither "document_url" nor "image_url"';
      else if (data === null) record.problem = `document.${type} is not a base64 data URL`;
      if (record.problem) return mistralError(422, `fake Mistral OCR: ${record.problem}`, 'invalid_request_error');

      if (reply && 'error' in reply) {
        const { status, message, type: errorType } = reply.error;
        return mistralError(status, message ?? `fake Mistral OCR error ${status}`, errorType ?? 'api_error');
      }
      const pages = reply?.pages ?? [`Fake Mistral OCR read ${record.mime}, ${record.bytes} bytes.`];
      return {
        status: 200,
        body: {
          pages: pages.map((markdown, index) => ({ index, markdown, images: [], dimensions: { dpi: 200, height: 2200, width: 1700 } })),
          model: 'mistral-ocr-fake',
          usage_info: { pages_processed: pages.length, doc_size_bytes: record.bytes },
        },
      };
    },
    setReply(next) {
      reply = next;
    },
    state: () => structuredClone({ requests, reply }),
    reset() {
      requests = [];
      reply = null;
    },
  };
}
