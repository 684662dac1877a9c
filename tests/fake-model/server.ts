// A scripted fake of the Anthropic Messages API on Node's http module. Every agent test and
// benchmark talks to it (through the real proxy), so it speaks the real wire format; the script
// decides each reply and checks each request. /_fake/* lets other processes drive it over HTTP.
// It also fakes Mistral's POST /v1/ocr (ocr.ts), kept apart from the model's requests and script.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseScript } from '../../worker/agent/scripted/check.ts';
import { fillCaptures } from '../../worker/agent/scripted/captures.ts';
import { checkExpect } from '../../worker/agent/scripted/expect.ts';
import { createFakeOcr, type FakeOcr, parseOcrReply } from './ocr.ts';
import { type Exchange, sendError, sendMessage } from './respond.ts';
import { type FakeScript, type FakeTurn, isErrorReply } from '../../worker/agent/scripted/script.ts';
import { buildMessage, errorTypeForStatus, wireError } from '../../worker/agent/scripted/wire.ts';

export interface FakeModel {
  /** Base URL, e.g. http://127.0.0.1:41234 — what an SDK takes as baseURL. */
  url: string;
  /**
   * Replaces the script and forgets recorded requests and failures. Throws ScriptError, keeping
   * the old script, when the new one is invalid.
   */
  load(script: FakeScript): void;
  /** A snapshot; later requests do not change it. */
  state(): FakeState;
  /**
   * Forgets recorded requests and failures and rewinds the script to its first turn; also forgets
   * the fake OCR's requests and reply.
   */
  reset(): void;
  /** The fake Mistral OCR (POST /v1/ocr): its reply and what it received. */
  ocr: Pick<FakeOcr, 'setReply' | 'state'>;
  /** Stops listening and cuts open connections, hanging streams included. */
  close(): Promise<void>;
}

export interface FakeState {
  requests: RecordedRequest[];
  failures: Failure[];
  /** Requests the script can still answer; null when a turn repeats forever. */
  remaining: number | null;
}

export interface RecordedRequest {
  /** 1-based count since the last load/reset; also names msg_fake_<n> and req_fake_<n>. */
  n: number;
  method: string;
  /** Path with query string, e.g. /v1/messages?beta=true. */
  path: string;
  /** Lower-cased names. Keys are kept: only fake keys ever reach this server. */
  headers: Record<string, string>;
  /** Parsed JSON; the raw text when it is not JSON; null when empty. */
  body: unknown;
  /** The script turn that answered, or null when none did. */
  turn: number | null;
  /** The client closed the connection before the response was complete (stop, abort). */
  aborted: boolean;
}

export interface Failure {
  request: number;
  turn: number | null;
  message: string;
}

const EXPOSED_HEADERS = 'request-id, retry-after, retry-after-ms, x-should-retry';
const EXPECTATION_PREFIX = 'fake model expectation failed:';

/**
 * Starts listening (default 127.0.0.1, a free port). Rejects when the port cannot be bound or
 * `opts.script` is invalid (ScriptError).
 */
export async function startFakeModel(
  opts: { port?: number; host?: string; script?: FakeScript } = {},
): Promise<FakeModel> {
  let script: FakeScript = opts.script ? parseScript(opts.script) : { name: '(no script loaded)', turns: [] };
  let cursor = { turn: 0, used: 0 };
  let requests: RecordedRequest[] = [];
  let failures: Failure[] = [];
  const ocr = createFakeOcr();

  const reset = (): void => {
    cursor = { turn: 0, used: 0 };
    requests = [];
    failures = [];
    ocr.reset();
  };

  const takeTurn = (): { turn: FakeTurn; index: number; repetition: number } | undefined => {
    for (let t = script.turns[cursor.turn]; t !== undefined; t = script.turns[cursor.turn]) {
      if (t.repeat === -1 || cursor.used < (t.repeat ?? 1)) {
        return { turn: t, index: cursor.turn, repetition: cursor.used++ };
      }
      cursor = { turn: cursor.turn + 1, used: 0 };
    }
    return undefined;
  };

  const remaining = (): number | null => {
    let left = 0;
    for (const [i, t] of script.turns.entries()) {
      if (i < cursor.turn) continue;
      if (t.repeat === -1) return null;
      left += (t.repeat ?? 1) - (i === cursor.turn ? cursor.used : 0);
    }
    return left;
  };

  const fail = (record: RecordedRequest, turn: number | null, message: string): void => {
    failures.push({ request: record.n, turn, message });
  };

  async function handleModel(req: IncomingMessage, ex: Exchange, record: RecordedRequest, raw: string): Promise<void> {
    const path = record.path.split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/messages') {
      const message = `fake model: no route for ${req.method} ${record.path} (only POST /v1/messages)`;
      fail(record, null, message);
      return sendError(ex, 404, wireError('not_found_error', message));
    }
    if (typeof record.body !== 'object' || record.body === null || Array.isArray(record.body)) {
      const message = 'fake model: request body is not a JSON object';
      fail(record, null, message);
      return sendError(ex, 400, wireError('invalid_request_error', message));
    }
    const next = takeTurn();
    if (!next) {
      const message = `fake model: script exhausted (request ${record.n}); script "${script.name}" has no turns left`;
      fail(record, null, message);
      return sendError(ex, 500, wireError('api_error', message));
    }
    record.turn = next.index;
    const where = `script "${script.name}" turn ${next.index}`;
    const body = record.body as Record<string, unknown>;
    const problems = next.turn.expect ? checkExpect(next.turn.expect, { headers: record.headers, body }) : [];
    if (problems.length > 0) {
      for (const problem of problems) fail(record, next.index, `${where}: ${problem}`);
      const message = `${EXPECTATION_PREFIX} ${where}: ${problems.join('; ')}`;
      return sendError(ex, 400, wireError('invalid_request_error', message));
    }
    if (isErrorReply(next.turn.reply)) {
      const { status, type, message, headers } = next.turn.reply.error;
      return sendError(ex, status, wireError(type ?? errorTypeForStatus(status), message), headers);
    }
    const filled = fillCaptures(next.turn.reply, body);
    if ('problem' in filled) {
      fail(record, next.index, `${where}: ${filled.problem}`);
      return sendError(ex, 400, wireError('invalid_request_error', `${EXPECTATION_PREFIX} ${where}: ${filled.problem}`));
    }
    const { reply } = filled;
    const model = body['model'];
    const message = buildMessage(reply, {
      messageId: `msg_fake_${record.n}`,
      model: typeof model === 'string' ? model : 'fake-model',
      turn: next.index,
      repetition: next.repetition,
      requestBytes: Buffer.byteLength(raw),
    });
    return sendMessage(ex, message, reply, body['stream'] === true);
  }

  function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string, raw: string): void {
    const route = `${req.method} ${path}`;
    if (route === 'GET /_fake/state') return json(res, 200, model.state());
    if (route === 'POST /_fake/reset') {
      reset();
      return json(res, 200, { ok: true });
    }
    if (route === 'POST /_fake/script') {
      let parsed: FakeScript;
      try {
        parsed = parseScript(JSON.parse(raw));
      } catch (e) {
        return json(res, 400, { ok: false, error: { code: 'invalid_script', message: (e as Error).message } });
      }
      model.load(parsed);
      return json(res, 200, { ok: true, name: parsed.name, remaining: remaining() });
    }
    if (route === 'GET /_fake/ocr') return json(res, 200, ocr.state());
    if (route === 'POST /_fake/ocr') {
      try {
        ocr.setReply(parseOcrReply(JSON.parse(raw)));
      } catch (e) {
        return json(res, 400, { ok: false, error: { code: 'invalid_ocr_reply', message: (e as Error).message } });
      }
      return json(res, 200, { ok: true });
    }
    json(res, 404, { ok: false, error: { code: 'no_route', message: `no admin route ${route}` } });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    if (req.method === 'OPTIONS') return preflight(req, res);
    const raw = await readBody(req);
    const path = req.url ?? '/';
    if (path.startsWith('/_fake/')) return handleAdmin(req, res, path.split('?')[0] ?? path, raw);
    if (req.method === 'POST' && path.split('?')[0] === '/v1/ocr') {
      const answer = ocr.answer(flattenHeaders(req), parseBody(raw));
      return json(res, answer.status, answer.body);
    }

    const record: RecordedRequest = {
      n: requests.length + 1,
      method: req.method ?? '',
      path,
      headers: flattenHeaders(req),
      body: parseBody(raw),
      turn: null,
      aborted: false,
    };
    requests.push(record);
    let closed = false;
    const ex: Exchange = {
      res,
      requestId: `req_fake_${record.n}`,
      closed: new Promise((resolve) => res.once('close', resolve)),
      isClosed: () => closed,
      destroyedByServer: false,
    };
    res.once('close', () => {
      closed = true;
      if (!res.writableFinished && !ex.destroyedByServer) record.aborted = true;
    });
    try {
      await handleModel(req, ex, record, raw);
    } catch (e) {
      // A bug here must surface in the test, not as a hung request.
      const message = `fake model: internal error: ${(e as Error).stack ?? String(e)}`;
      fail(record, record.turn, message);
      sendError(ex, 500, wireError('api_error', message));
    }
  }

  // handle() only rejects when the request body cannot be read (the client left mid-upload).
  const server: Server = createServer((req, res) => handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host === undefined || opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;

  const model: FakeModel = {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    load(next) {
      script = parseScript(next);
      reset();
    },
    state: () => structuredClone({ requests, failures, remaining: remaining() }),
    reset,
    ocr: { setReply: ocr.setReply, state: ocr.state },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
  return model;
}

function preflight(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader('access-control-allow-headers', req.headers['access-control-request-headers'] ?? '*');
  res.setHeader('access-control-max-age', '600');
  // A page on a public origin calling this local server asks for private-network access first.
  if (req.headers['access-control-request-private-network'] === 'true') {
    res.setHeader('access-control-allow-private-network', 'true');
  }
  res.writeHead(204).end();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseBody(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
