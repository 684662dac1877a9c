// HTTP/1.1 to the exact address a name was checked at: a TCP connection (the Workers `connect()`)
// to that address, TLS started on it for the name (SNI and the certificate check are the name's),
// and the request written by hand. `fetch()` takes only a URL and looks the name up again itself,
// so a name that answered a public address to the check could answer a private one to the fetch
// (DNS rebinding); here there is no second lookup. One request per connection (Connection: close).
import { connect } from 'cloudflare:sockets';
import { isCloudflareAddress } from './address.ts';
import type { Env } from './env.ts';
import { checkName, type NameRefusal } from './resolve.ts';

/** The most a response's status line and headers may take. */
const MAX_HEAD_BYTES = 64 * 1024;
const READ_BYTES = 64 * 1024;

export interface PinnedRequest {
  method: string;
  headers: Headers;
  body?: Uint8Array;
  signal: AbortSignal;
}

/**
 * Sends `init` for `url` to `address` (an IPv4 or IPv6 address `url`'s host was checked at) and
 * resolves with the response once its head has arrived; the body streams. Rejects when the
 * connection, TLS (a certificate not valid for the name) or the response's head fails.
 */
export async function pinnedFetch(url: URL, address: string, init: PinnedRequest): Promise<Response> {
  const tls = url.protocol === 'https:';
  const port = Number(url.port) || (tls ? 443 : 80);
  const plain = connect({ hostname: address, port }, { secureTransport: tls ? 'starttls' : 'off', allowHalfOpen: false });
  const socket = tls ? plain.startTls({ expectedServerHostname: url.hostname.replace(/\.$/, '') }) : plain;
  const close = () => void socket.close().catch(() => {});
  if (init.signal.aborted) {
    close();
    throw init.signal.reason;
  }
  init.signal.addEventListener('abort', close, { once: true });
  try {
    const writer = socket.writable.getWriter();
    await writer.write(requestHead(url, init));
    if (init.body?.length) await writer.write(init.body);
    writer.releaseLock();
    const reader = new ByteReader(socket.readable.getReader());
    for (;;) {
      const head = await readHead(reader);
      // 1xx (100 Continue, 103 Early Hints): the real answer follows.
      if (head.status < 200) continue;
      const body = init.method === 'HEAD' || head.status === 204 || head.status === 304 ? null : bodyStream(reader, head.headers, close, init.signal);
      if (body === null) close();
      return new Response(decoded(body, head.headers), { status: head.status, statusText: head.statusText, headers: head.headers });
    }
  } catch (error) {
    close();
    throw init.signal.aborted ? init.signal.reason : error;
  }
}

/**
 * Looks `url`'s name up (checkName: A and AAAA, all public, fail closed) and sends the request to
 * the addresses it gave, one after another until one connects; never by name, except where a
 * deployed Worker may not connect at all: to Cloudflare's own addresses, a site behind Cloudflare
 * is fetched by name, from Cloudflare's network, which has no way into the owner's. `passes`: the
 * tests' loopback servers (their exact `address:port`). A refusal is returned, not thrown.
 */
export async function fetchChecked(env: Env, url: URL, init: PinnedRequest, passes: (addressAndPort: string) => boolean = () => false): Promise<Response | NameRefusal> {
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const checked = await checkName(env, url.hostname, (address) => passes(`${address.includes(':') ? `[${address}]` : address}:${port}`));
  if (!checked.ok) return checked;
  let failure: unknown = new Error('no address to connect to');
  for (const address of checked.addresses) {
    try {
      return await pinnedFetch(url, address, init);
    } catch (error) {
      if (init.signal.aborted) throw error;
      failure = error;
    }
  }
  if (checked.addresses.every(isCloudflareAddress)) {
    return fetch(url.href, { method: init.method, headers: init.headers, ...(init.body ? { body: init.body } : {}), redirect: 'manual', signal: init.signal });
  }
  throw failure;
}

function requestHead(url: URL, init: PinnedRequest): Uint8Array {
  const lines = [`${init.method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, 'connection: close', 'accept-encoding: gzip, deflate'];
  for (const [name, value] of init.headers) {
    if (!['host', 'connection', 'content-length', 'transfer-encoding', 'accept-encoding'].includes(name)) lines.push(`${name}: ${value.replace(/[\r\n]/g, ' ')}`);
  }
  if (init.body !== undefined) lines.push(`content-length: ${init.body.length}`);
  return new TextEncoder().encode(`${lines.join('\r\n')}\r\n\r\n`);
}

async function readHead(reader: ByteReader): Promise<{ status: number; statusText: string; headers: Headers }> {
  let budget = MAX_HEAD_BYTES;
  const statusLine = await reader.line(budget);
  const match = statusLine === null ? null : /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
  if (!match) throw new Error('the server did not answer in HTTP/1.1');
  budget -= statusLine!.length;
  const headers = new Headers();
  for (;;) {
    const line = await reader.line(budget);
    if (line === null) throw new Error('the connection closed in the middle of the answer');
    if (line === '') break;
    budget -= line.length;
    const colon = line.indexOf(':');
    try {
      if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      // A header name or value the runtime refuses: the rest of the answer is still usable.
    }
  }
  return { status: Number(match[1]), statusText: match[2] ?? '', headers };
}

function bodyStream(reader: ByteReader, headers: Headers, close: () => void, signal: AbortSignal): ReadableStream<Uint8Array> {
  const chunked = /(^|,)\s*chunked\s*$/i.test(headers.get('transfer-encoding') ?? '');
  const length = chunked ? null : headers.get('content-length') === null ? null : Number(headers.get('content-length'));
  if (length !== null && !(Number.isSafeInteger(length) && length >= 0)) throw new Error('the server sent a content-length that is not a number');
  let left = length ?? Infinity;
  /** Bytes left in the current chunk; 0 between chunks. */
  let inChunk = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (chunked && inChunk === 0) {
          const size = await reader.line(1024);
          if (size === null) throw new Error('the connection closed in the middle of the answer');
          inChunk = parseInt(size.split(';')[0]!.trim(), 16);
          if (!Number.isSafeInteger(inChunk) || inChunk < 0) throw new Error('the server sent a malformed chunk');
          if (inChunk === 0) {
            // Trailers, if any, end with an empty line.
            for (let line = await reader.line(MAX_HEAD_BYTES); line !== null && line !== ''; line = await reader.line(MAX_HEAD_BYTES));
            close();
            return controller.close();
          }
        }
        if (left === 0) {
          close();
          return controller.close();
        }
        const bytes = await reader.some(Math.min(READ_BYTES, chunked ? inChunk : left));
        // Stopped (a time limit): the end of the connection is not the end of the answer.
        if (signal.aborted) throw signal.reason;
        if (bytes === null) {
          close();
          if (chunked || length !== null) throw new Error('the connection closed in the middle of the answer');
          return controller.close();
        }
        if (chunked) {
          inChunk -= bytes.length;
          if (inChunk === 0 && (await reader.line(2)) !== '') throw new Error('the server sent a malformed chunk');
        } else left -= bytes.length;
        controller.enqueue(bytes);
      } catch (error) {
        close();
        controller.error(error);
      }
    },
    cancel: close,
  });
}

/** A body sent compressed (gzip or deflate, which the request offered) comes out plain. */
function decoded(body: ReadableStream<Uint8Array> | null, headers: Headers): ReadableStream<Uint8Array> | null {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (body === null || (encoding !== 'gzip' && encoding !== 'deflate' && encoding !== 'x-gzip')) return body;
  headers.delete('content-encoding');
  headers.delete('content-length');
  return body.pipeThrough(new DecompressionStream(encoding === 'deflate' ? 'deflate' : 'gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
}

/** Lines and pieces from a socket's byte stream, keeping what was read ahead. */
class ByteReader {
  private buffer: Uint8Array = new Uint8Array(0);
  private ended = false;

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next line without its CRLF (or LF), or null at the end; throws past `max` bytes. */
  async line(max: number): Promise<string | null> {
    for (;;) {
      const at = this.buffer.indexOf(0x0a);
      if (at >= 0) {
        const end = at > 0 && this.buffer[at - 1] === 0x0d ? at - 1 : at;
        const text = latin1(this.buffer.subarray(0, end));
        this.buffer = this.buffer.subarray(at + 1);
        return text;
      }
      if (this.buffer.length > max) throw new Error('the server sent a line too long');
      if (!(await this.fill())) {
        // The last line, with no line end.
        if (this.buffer.length === 0) return null;
        const text = latin1(this.buffer);
        this.buffer = new Uint8Array(0);
        return text;
      }
    }
  }

  /** Up to `max` bytes, or null at the end. */
  async some(max: number): Promise<Uint8Array | null> {
    if (this.buffer.length === 0 && !(await this.fill())) return null;
    const out = this.buffer.subarray(0, max);
    this.buffer = this.buffer.subarray(out.length);
    // A copy: the stream's consumer may keep it while the buffer moves on.
    return out.slice();
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const { value, done } = await this.reader.read();
    if (done) {
      this.ended = true;
      return false;
    }
    if (this.buffer.length === 0) this.buffer = value;
    else {
      const joined = new Uint8Array(this.buffer.length + value.length);
      joined.set(this.buffer);
      joined.set(value, this.buffer.length);
      this.buffer = joined;
    }
    return true;
  }
}

function latin1(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return text;
}
