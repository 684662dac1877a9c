// The Anthropic Messages wire format the fake model speaks: the assembled message, the SSE event
// sequence that streams it, and error bodies. Pure functions, so the shapes are easy to test.
import type { MessageReply, StopReason } from './script.ts';

export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type WireBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface WireMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: WireBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: WireUsage;
}

export interface WireError {
  type: string;
  message: string;
}

export type WireEvent =
  | { type: 'message_start'; message: Omit<WireMessage, 'stop_reason'> & { stop_reason: null } }
  | { type: 'content_block_start'; index: number; content_block: WireBlock }
  | { type: 'ping' }
  | {
      type: 'content_block_delta';
      index: number;
      delta: { type: 'text_delta'; text: string } | { type: 'input_json_delta'; partial_json: string };
    }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: StopReason; stop_sequence: string | null };
      usage: { output_tokens: number };
    }
  | { type: 'message_stop' }
  | { type: 'error'; error: WireError };

export const DEFAULT_CHUNK_CHARS = 8;

/** Where a reply is being served from; names the ids so they are deterministic. */
export interface ReplyContext {
  messageId: string;
  /** The request's `model`, echoed as the API does. */
  model: string;
  turn: number;
  /** 0 for the first use of a turn, k for its k-th repetition. */
  repetition: number;
  /** Size of the request body, for the default input_tokens. */
  requestBytes: number;
}

/** The assembled message: the non-streaming response, and what a stream adds up to. */
export function buildMessage(reply: MessageReply, ctx: ReplyContext): WireMessage {
  const suffix = ctx.repetition > 0 ? `_${ctx.repetition}` : '';
  const content = reply.content.map((block, i): WireBlock => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    const id = block.id ?? `toolu_fake_${ctx.turn}_${i}${suffix}`;
    return { type: 'tool_use', id, name: block.name, input: block.input };
  });
  const outputChars = content
    .map((b) => (b.type === 'text' ? b.text : JSON.stringify(b.input)).length)
    .reduce((a, b) => a + b, 0);
  return {
    id: ctx.messageId,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: reply.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: reply.stop_sequence ?? null,
    usage: {
      input_tokens: reply.usage?.input_tokens ?? Math.ceil(ctx.requestBytes / 4),
      output_tokens: reply.usage?.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)),
      cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? 0,
    },
  };
}

/**
 * The SSE events that stream `message`, in the API's order: message_start, then per block
 * content_block_start / deltas / content_block_stop with one ping after the first start,
 * message_delta, message_stop.
 */
export function streamEvents(message: WireMessage, chunkChars = DEFAULT_CHUNK_CHARS): WireEvent[] {
  // Like the API, message_start carries the input usage and only a token or so of output; the
  // real output count arrives in message_delta, so a client that reads the wrong one is caught.
  const events: WireEvent[] = [
    {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...message.usage, output_tokens: 1 },
      },
    },
  ];
  message.content.forEach((block, index) => {
    const opening: WireBlock = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    events.push({ type: 'content_block_start', index, content_block: opening });
    if (index === 0) events.push({ type: 'ping' });
    if (block.type === 'text') {
      for (const text of chunks(block.text, chunkChars)) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      }
    } else {
      // The API opens every tool input with an empty partial_json; clients must cope with it.
      for (const partial_json of ['', ...chunks(JSON.stringify(block.input), chunkChars)]) {
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    }
    events.push({ type: 'content_block_stop', index });
  });
  if (message.content.length === 0) events.push({ type: 'ping' });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
      usage: { output_tokens: message.usage.output_tokens },
    },
    { type: 'message_stop' },
  );
  return events;
}

/** One SSE frame: the event name line, the JSON data line, a blank line. */
export function formatSse(event: WireEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

// Cut by code points so a chunk never splits a surrogate pair, as the API's token deltas never do.
function chunks(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const STATUS_BY_TYPE: Record<string, number> = Object.fromEntries(
  Object.entries(TYPE_BY_STATUS).map(([status, type]) => [type, Number(status)]),
);

const MESSAGE_BY_TYPE: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'Not found',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
  api_error: 'Internal server error',
  timeout_error: 'Request timed out',
  overloaded_error: 'Overloaded',
};

export function errorTypeForStatus(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

export function statusForErrorType(type: string): number {
  return STATUS_BY_TYPE[type] ?? 500;
}

export function wireError(type: string, message?: string): WireError {
  return { type, message: message ?? MESSAGE_BY_TYPE[type] ?? type };
}

/** The body of an HTTP error response; the API names the request in it too. */
export function errorBody(error: WireError, requestId: string): string {
  return JSON.stringify({ type: 'error', error, request_id: requestId });
}
