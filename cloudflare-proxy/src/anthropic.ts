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

/**
 * `body`: the request's bytes, already read (and capped). `onUsage` hears the model tokens the reply
 * reports (input, cache and output), once it has been read, to count against the device's day;
 * `onCounting` gets the reading, to keep the Worker alive for it (ctx.waitUntil).
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

  const gone = new AbortController();
  let upstream: Response;
  try {
    upstream = await fetch(url, {
      method: 'POST',
      headers: upstreamRequestHeaders(request.headers, apiKey),
      body,
      // The client went away (Stop): the model stops too, and the counting copy with it.
      signal: AbortSignal.any([request.signal, gone.signal]),
      // The API never redirects; following one would send the key somewhere unplanned.
      redirect: 'manual',
    });
  } catch {
    // The thrown error can name hosts and sockets; the client gets a fixed message instead.
    return errorResponse(502, 'proxy_upstream_unreachable', UPSTREAM_UNREACHABLE_MESSAGE);
  }

  // Two branches: the client's goes through untouched (a transform on the way costs ~50 µs per
  // small SSE chunk in workerd); the other is read for the usage beside it.
  // The client's branch goes through a native identity stream: when the client leaves, that pipe
  // fails, and the request upstream is aborted (a tee alone would keep reading for the other branch).
  const [toClient, toCount] = upstream.body ? upstream.body.tee() : [null, null];
  let reply: ReadableStream<Uint8Array> | null = null;
  if (toClient && toCount) {
    const relay = new IdentityTransformStream();
    toClient.pipeTo(relay.writable).catch(() => gone.abort());
    onCounting(toCount.pipeTo(usageSink(onUsage)).catch(() => {}));
    reply = relay.readable;
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
 * message_delta's output tokens; a JSON reply's whole usage) are decoded, once, at the end.
 * Reports the sum once the body has been read.
 */
export function usageSink(onUsage: (tokens: number) => void): WritableStream<Uint8Array> {
  const WINDOW = 16 * 1024;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  const tail: Uint8Array[] = [];
  let tailBytes = 0;
  return new WritableStream({
    write(chunk) {
      if (headBytes < WINDOW) {
        head.push(chunk);
        headBytes += chunk.length;
        return;
      }
      tail.push(chunk);
      tailBytes += chunk.length;
      while (tail.length > 1 && tailBytes - tail[0]!.length >= WINDOW) tailBytes -= tail.shift()!.length;
    },
    close() {
      const decode = (parts: Uint8Array[]) => new TextDecoder().decode(concat(parts));
      // The tail may start mid-line: its first line is dropped unless it is the whole reply.
      const tailText = decode(tail);
      const lines = [...decode(head).split('\n'), ...(tail.length ? tailText.split('\n').slice(1) : [])];
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
      if (input + output > 0) onUsage(input + output);
    },
  });
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
