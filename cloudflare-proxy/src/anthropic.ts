// POST /v1/messages: relays a Messages API call with the Worker's key. The response body is handed
// back as the upstream's stream, so SSE events reach the browser as they arrive.
import { anthropicKey, DEFAULT_ANTHROPIC_UPSTREAM, type Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { allowedBetas, betasNotAllowed, passThroughResponseHeaders, upstreamRequestHeaders } from './headers.ts';

/** workerd's native pass-through stream (declared here so the tests' Node-side type check knows it). */
declare const IdentityTransformStream: new () => { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> };

export const NOT_CONFIGURED_MESSAGE =
  'This proxy has no Anthropic API key. When deployed, set one with ' +
  '`npx wrangler secret put ANTHROPIC_API_KEY`; when running locally, set ANTHROPIC_API_KEY in ' +
  'the environment of `npm start` (or `node cloudflare-proxy/local.mjs`).';

export const UPSTREAM_UNREACHABLE_MESSAGE =
  'The proxy could not reach the Anthropic API. Check the network, then try again.';

/** How long a reply whose client left is still read for its input tokens (message_start) before it is stopped. */
export const LEFT_READ_MS = 15_000;

/**
 * `body`: the request's bytes, already read (and capped). `onUsage` hears model tokens to count
 * against the device's day, possibly in parts (a streamed reply's input as soon as it shows, the
 * rest at its end); `onCounting` gets, before the call is made, a promise of the end of the
 * counting, to keep the Worker alive until then (ctx.waitUntil).
 * A client that leaves mid-reply stops the model, but not the count: the reply is read until its
 * input tokens show (at most LEFT_READ_MS), and its output is counted from what had streamed (see
 * usageSink); a reply that did not start by then counts the request's estimated input.
 */
export async function forwardMessages(
  request: Request,
  env: Env,
  body: Uint8Array<ArrayBuffer>,
  onUsage: (tokens: number) => void = () => {},
  onCounting: (done: Promise<void>) => void = () => {},
): Promise<Response> {
  const apiKey = anthropicKey(env);
  if (apiKey === null) {
    // Retrying cannot help until someone sets the key, so tell the SDK not to.
    return errorResponse(503, 'proxy_not_configured', NOT_CONFIGURED_MESSAGE, { 'x-should-retry': 'false' });
  }

  const refusedBetas = betasNotAllowed(request.headers.get('anthropic-beta'), allowedBetas(env.ANTHROPIC_BETA_ALLOWED));
  if (refusedBetas.length > 0) {
    const allowed = allowedBetas(env.ANTHROPIC_BETA_ALLOWED);
    const message =
      `This proxy does not pass the beta feature${refusedBetas.length > 1 ? 's' : ''} ${refusedBetas.map((b) => `"${b.slice(0, 80)}"`).join(', ')}: ` +
      `its owner allows ${allowed.length ? allowed.join(', ') : 'none'}. The owner can add one to ANTHROPIC_BETA_ALLOWED; otherwise send the request without it.`;
    return errorResponse(400, 'beta_not_allowed', message, { 'x-should-retry': 'false' });
  }

  const base = (env.ANTHROPIC_UPSTREAM || DEFAULT_ANTHROPIC_UPSTREAM).replace(/\/+$/, '');
  const url = `${base}/v1/messages${new URL(request.url).search}`;

  // Not the request's own signal: a client that leaves before the headers come must not take the
  // count with it (the API has the request, and bills its input).
  const stop = new AbortController();
  let started = false;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    if (started) stop.abort();
    else setTimeout(() => stop.abort(), Number(env.MESSAGES_LEFT_READ_MS) > 0 ? Number(env.MESSAGES_LEFT_READ_MS) : LEFT_READ_MS);
  };
  request.signal?.addEventListener('abort', leave);
  // Kept alive from here, not from the answer: a client that leaves before it would otherwise
  // take the call (and its count) with it.
  let counted!: () => void;
  onCounting(new Promise<void>((resolve) => (counted = resolve)));
  let upstream: Response;
  try {
    upstream = await fetch(url, {
      method: 'POST',
      headers: upstreamRequestHeaders(request.headers, apiKey),
      body,
      signal: stop.signal,
      // The API never redirects; following one would send the key somewhere unplanned.
      redirect: 'manual',
    });
  } catch {
    // The client left and the answer did not start in time: the API may still bill the input,
    // so it counts, estimated on the high side from the request's size.
    if (left) onUsage(inputEstimate(body));
    counted();
    // The thrown error can name hosts and sockets; the client gets a fixed message instead.
    return errorResponse(502, 'proxy_upstream_unreachable', UPSTREAM_UNREACHABLE_MESSAGE);
  }

  // Two branches: the client's goes through untouched (a transform on the way costs ~50 µs per
  // small SSE chunk in workerd); the other is read for the usage beside it.
  // The client's branch goes through a native identity stream: when the client leaves, that pipe
  // fails; the model is stopped once the count has what it needs (a tee alone would read on).
  const [toClient, toCount] = upstream.body ? upstream.body.tee() : [null, null];
  let reply: ReadableStream<Uint8Array> | null = null;
  if (toClient && toCount) {
    const relay = new IdentityTransformStream();
    toClient.pipeTo(relay.writable).catch(leave);
    const sink = usageSink(
      onUsage,
      () => {
        started = true;
        if (left) stop.abort();
      },
      inputEstimate(body),
    );
    void toCount.pipeTo(sink).catch(() => {}).finally(counted);
    reply = relay.readable;
  } else {
    counted();
    if (left) stop.abort();
  }
  return new Response(reply, {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: passThroughResponseHeaders(upstream.headers),
  });
}

/**
 * Reads the usage a reply reports (its copy of the reply), cheaply enough for a stream of many small chunks: only the
 * first 16 KB (message_start's input and cache tokens) and the last 16 KB (the final
 * message_delta's output tokens; a JSON reply's whole usage) are decoded. A streamed reply's input
 * is reported (and `onStarted` called) as soon as message_start shows, so a reply cut short still
 * counts it; the rest is reported at the end. Cut short (the client left, the model was stopped),
 * the output counts as the larger of what the reply reported and a quarter of the bytes it had
 * streamed: on the high side (SSE's framing counts too), so leaving early never spends less; its
 * input, if message_start never showed, as `inputIfUnseen`.
 */
export function usageSink(onUsage: (tokens: number) => void, onStarted: () => void = () => {}, inputIfUnseen = 0): WritableStream<Uint8Array> {
  const WINDOW = 16 * 1024;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  const tail: Uint8Array[] = [];
  let tailBytes = 0;
  let total = 0;
  /** Tokens already reported. */
  let counted = 0;
  let started = false;
  const decode = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));
  const report = (tokens: number) => {
    if (tokens > counted) onUsage(tokens - counted);
    counted = Math.max(counted, tokens);
  };
  const usageIn = (lines: string[]) => {
    let input = 0;
    let output = 0;
    for (const line of lines) {
      const json = line.startsWith('data:') ? line.slice(5) : line.trimStart().startsWith('{') ? line : null;
      if (json === null || !json.includes('"usage"')) continue;
      try {
        const event = JSON.parse(json) as { type?: string; usage?: Usage; message?: { usage?: Usage } };
        const usage = event.message?.usage ?? event.usage;
        if (!usage) continue;
        input = Math.max(input, (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0));
        output = Math.max(output, usage.output_tokens ?? 0);
      } catch {
        // Not ours to judge: the client reads the reply as it is.
      }
    }
    return { input, output };
  };
  const seen = () => {
    // The tail may start mid-line: its first line is dropped unless it is the whole reply.
    const tailText = decode(tail);
    return usageIn([...decode(head).split('\n'), ...(tail.length ? tailText.split('\n').slice(1) : [])]);
  };
  return new WritableStream({
    write(chunk) {
      total += chunk.length;
      if (headBytes < WINDOW) {
        head.push(chunk);
        headBytes += chunk.length;
        if (!started && chunk.includes(0x0a)) {
          // message_start is the stream's first event: its input tokens count from the moment they show.
          const lines = decode(head).split('\n');
          const line = lines.slice(0, -1).find((l) => l.startsWith('data:') && l.includes('"message_start"'));
          if (line) {
            started = true;
            report(usageIn([line]).input);
            onStarted();
          }
        }
        return;
      }
      tail.push(chunk);
      tailBytes += chunk.length;
      while (tail.length > 1 && tailBytes - tail[0]!.length >= WINDOW) tailBytes -= tail.shift()!.length;
    },
    close() {
      const { input, output } = seen();
      report(input + output);
    },
    abort() {
      const { input, output } = seen();
      report((input || inputIfUnseen) + Math.max(output, Math.ceil(total / 4)));
    },
  });
}

/** A request's input tokens when the reply never said: a quarter of its bytes, more than the API counts for text. */
function inputEstimate(body: Uint8Array): number {
  return Math.ceil(body.length / 4);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}
