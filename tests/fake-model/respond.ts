// Writes a scripted reply onto an HTTP response: SSE with delays, hangs, broken sockets and
// mid-stream errors, or the assembled JSON, or an API error. The timing lives here, apart from
// routing, so each way a reply can end is visible in one place.
import type { ServerResponse } from 'node:http';
import type { MessageReply } from '../../worker/agent/scripted/script.ts';
import {
  type WireError,
  type WireMessage,
  errorBody,
  formatSse,
  statusForErrorType,
  streamEvents,
  wireError,
} from '../../worker/agent/scripted/wire.ts';

/** One response in flight, with the signal of the client going away. */
export interface Exchange {
  res: ServerResponse;
  requestId: string;
  /** Resolves when the connection closes, whoever closes it. */
  closed: Promise<void>;
  isClosed(): boolean;
  /** Set before the server destroys the socket itself, so that is not taken for a client abort. */
  destroyedByServer: boolean;
}

/** Sends a scripted message, streamed or whole. Resolves when the response is over; never rejects. */
export async function sendMessage(
  ex: Exchange,
  message: WireMessage,
  reply: MessageReply,
  stream: boolean,
): Promise<void> {
  if (stream) return sendStream(ex, message, reply);
  if (reply.delay_ms) await sleep(reply.delay_ms);
  if (ex.isClosed()) return;
  if (reply.hang_after_events !== undefined) return ex.closed;
  if (reply.break_after_events !== undefined) return destroy(ex);
  if (reply.stream_error) {
    // Without a stream the API reports an overload as a plain HTTP error.
    const error = wireError(reply.stream_error.type ?? 'overloaded_error', reply.stream_error.message);
    return sendError(ex, statusForErrorType(error.type), error);
  }
  sendJson(ex, 200, JSON.stringify(message));
}

async function sendStream(ex: Exchange, message: WireMessage, reply: MessageReply): Promise<void> {
  const { res } = ex;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': ex.requestId,
  });
  // Headers go out at once so a client waiting on a hang still sees the response start.
  res.flushHeaders();
  const events = streamEvents(message, reply.chunk_chars);
  const limit =
    reply.hang_after_events ?? reply.break_after_events ?? reply.stream_error?.after_events ?? events.length;
  for (const event of events.slice(0, limit)) {
    if (reply.delay_ms) await sleep(reply.delay_ms);
    if (ex.isClosed()) return;
    await write(ex, formatSse(event));
  }
  if (ex.isClosed()) return;
  if (reply.hang_after_events !== undefined) return ex.closed;
  if (reply.break_after_events !== undefined) return destroy(ex);
  if (reply.stream_error) {
    const error = wireError(reply.stream_error.type ?? 'overloaded_error', reply.stream_error.message);
    await write(ex, formatSse({ type: 'error', error }));
  }
  res.end();
}

/** An API error response: status, `{"type":"error",...}` body, request-id and extra headers. */
export function sendError(ex: Exchange, status: number, error: WireError, headers: Record<string, string> = {}): void {
  if (ex.isClosed() || ex.res.headersSent) return;
  for (const [name, value] of Object.entries(headers)) ex.res.setHeader(name, value);
  sendJson(ex, status, errorBody(error, ex.requestId));
}

function sendJson(ex: Exchange, status: number, body: string): void {
  ex.res.writeHead(status, { 'content-type': 'application/json', 'request-id': ex.requestId });
  ex.res.end(body);
}

// Waiting for each write's callback flushes the event before the next step (a socket destroyed
// right after must not swallow it) and respects backpressure from a slow reader.
function write(ex: Exchange, chunk: string): Promise<void> {
  return Promise.race([new Promise<void>((resolve) => ex.res.write(chunk, () => resolve())), ex.closed]);
}

function destroy(ex: Exchange): void {
  ex.destroyedByServer = true;
  ex.res.destroy();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
