// POST /v1/messages: relays a Messages API call with the Worker's key. The response body is handed
// back as the upstream's stream, so SSE events reach the browser as they arrive.
import { anthropicKey, DEFAULT_ANTHROPIC_UPSTREAM, type Env } from './env.ts';
import { errorResponse } from './errors.ts';
import { passThroughResponseHeaders, upstreamRequestHeaders } from './headers.ts';

export const NOT_CONFIGURED_MESSAGE =
  'This proxy has no Anthropic API key. When deployed, set one with ' +
  '`npx wrangler secret put ANTHROPIC_API_KEY`; when running locally, set ANTHROPIC_API_KEY in ' +
  'the environment of `npm start` (or `node cloudflare-proxy/local.mjs`).';

export const UPSTREAM_UNREACHABLE_MESSAGE =
  'The proxy could not reach the Anthropic API. Check the network, then try again.';

/**
 * `body`: the request's bytes, already read (and capped). `onUsage` hears the model tokens the reply
 * reports (input, cache and output), once it has been read, to count against the device's day.
 */
export async function forwardMessages(request: Request, env: Env, body: Uint8Array<ArrayBuffer>, onUsage: (tokens: number) => void = () => {}): Promise<Response> {
  const apiKey = anthropicKey(env);
  if (apiKey === null) {
    // Retrying cannot help until someone sets the key, so tell the SDK not to.
    return errorResponse(503, 'proxy_not_configured', NOT_CONFIGURED_MESSAGE, { 'x-should-retry': 'false' });
  }

  const base = (env.ANTHROPIC_UPSTREAM || DEFAULT_ANTHROPIC_UPSTREAM).replace(/\/+$/, '');
  const url = `${base}/v1/messages${new URL(request.url).search}`;

  let upstream: Response;
  try {
    upstream = await fetch(url, {
      method: 'POST',
      headers: upstreamRequestHeaders(request.headers, apiKey),
      body,
      // The API never redirects; following one would send the key somewhere unplanned.
      redirect: 'manual',
    });
  } catch {
    // The thrown error can name hosts and sockets; the client gets a fixed message instead.
    return errorResponse(502, 'proxy_upstream_unreachable', UPSTREAM_UNREACHABLE_MESSAGE);
  }

  return new Response(upstream.body?.pipeThrough(countUsage(onUsage)) ?? null, {
    status: upstream.status,
    statusText: upstream.statusText,
    headers: passThroughResponseHeaders(upstream.headers),
  });
}

/**
 * Passes the reply through untouched while reading the usage it reports: in a stream,
 * message_start's input and cache tokens and the last message_delta's output tokens; in a JSON
 * reply, its `usage`. Reports the sum once the body has been read.
 */
export function countUsage(onUsage: (tokens: number) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let text = '';
  let input = 0;
  let output = 0;
  const scan = (final: boolean) => {
    // Only whole lines are read; a reply that is not SSE is read whole at the end.
    const lines = text.split('\n');
    text = final ? '' : (lines.pop() ?? '');
    for (const line of lines) {
      const json = line.startsWith('data:') ? line.slice(5) : final && lines.length === 1 ? line : null;
      if (json === null || !json.includes('"usage"')) continue;
      try {
        const event = JSON.parse(json) as { type?: string; usage?: Usage; message?: { usage?: Usage } };
        const usage = event.message?.usage ?? event.usage;
        if (!usage) continue;
        const prompt = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
        if (event.type === 'message_start' || event.type === 'message' || event.type === undefined) input = Math.max(input, prompt);
        output = Math.max(output, usage.output_tokens ?? 0);
      } catch {
        // Not ours to judge: the client reads the stream as it is.
      }
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      // Bounded: a line longer than 1 MB (no usage is) is dropped rather than kept growing.
      text += decoder.decode(chunk, { stream: true });
      if (text.length > 1_048_576 && !text.includes('\n')) text = '';
      if (text.includes('\n')) scan(false);
    },
    flush() {
      text += decoder.decode();
      scan(true);
      if (input + output > 0) onUsage(input + output);
    },
  });
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}
