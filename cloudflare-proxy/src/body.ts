// Request bodies read whole with a cap, so an oversized request is refused before it costs an
// upstream call, whatever its content-length claims.
import { errorResponse } from './errors.ts';

/** What is read and dropped past the cap before the connection is given up (see readCapped). */
const DRAIN_BYTES = 8 * 1024 * 1024;

/** Caps per route: the API's own request limit for messages; small ones for pairing and the owner's routes. */
export const MAX_MESSAGES_REQUEST_BYTES = 32 * 1024 * 1024;
export const MAX_SMALL_REQUEST_BYTES = 4 * 1024;

/**
 * The whole body, or null once it passes `max` bytes. A little more is read and dropped before
 * giving up (up to DRAIN_BYTES): a client that overshoots slightly then gets the 413 instead of a
 * connection reset in the middle of its upload.
 */
export async function readCapped(stream: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  if (stream === null) return new Uint8Array();
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      let drained = 0;
      while (drained < DRAIN_BYTES) {
        const next = await reader.read();
        if (next.done) return null;
        drained += next.value.byteLength;
      }
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** The body, or a 413 naming the route's limit. */
export async function readBody(request: Request, max: number, what: string): Promise<Uint8Array<ArrayBuffer> | Response> {
  const declared = Number(request.headers.get('content-length'));
  const body = declared > max ? null : await readCapped(request.body, max);
  if (body !== null) return body;
  if (declared > max) await request.body?.cancel().catch(() => {});
  return errorResponse(413, 'request_too_large', `${what} is over this proxy's limit of ${formatBytes(max)}.`);
}

/** A small JSON body (pairing, the owner's routes), or the error response to send. */
export async function readJsonBody(request: Request): Promise<Record<string, unknown> | Response> {
  const body = await readBody(request, MAX_SMALL_REQUEST_BYTES, 'The request body');
  if (body instanceof Response) return body;
  if (body.byteLength === 0) return {};
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  return errorResponse(400, 'invalid_request', 'The request body must be a JSON object.');
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MB` : `${bytes / 1024} KB`;
}
