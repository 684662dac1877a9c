// The Anthropic Messages stream function, through the proxy: the browser never holds a key.
import Anthropic, { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ErrorShape } from '../../protocol/errors.ts';
import { ModelError } from './errors.ts';
import type { ModelRequest, ModelStreamEvent, StreamFn } from './types.ts';

export interface AnthropicStreamOptions {
  /** The proxy's base URL (it adds the key upstream), or Anthropic's with the user's own key. */
  baseURL: string;
  /** Only for the direct mode; through the proxy the browser holds no key. */
  apiKey?: string | null;
  /** Through the proxy: this browser's device token (revocable by the proxy's owner), never a key. */
  deviceToken?: string | null;
  fetch?: typeof globalThis.fetch;
}

export function createAnthropicStream(options: AnthropicStreamOptions): StreamFn {
  const client = new Anthropic({
    baseURL: options.baseURL,
    ...(options.apiKey
      ? // The user's own key, sent from this browser (they were warned); Anthropic wants the header below.
        { apiKey: options.apiKey, authToken: null, dangerouslyAllowBrowser: true }
      : options.deviceToken
        ? // No key in the browser: the device token says who is asking; the proxy adds the key.
          { apiKey: null, authToken: options.deviceToken }
        : { apiKey: null, authToken: null, defaultHeaders: { Authorization: null } }),
    // Retries belong to the agent loop, which reports them to the UI.
    maxRetries: 0,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  return async function* stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent> {
    try {
      const messageStream = client.messages.stream(
        {
          model: request.model,
          system: [
            // The stable prefix (with the tools before it) is cached; the dynamic part is not.
            { type: 'text', text: request.system.stable, cache_control: { type: 'ephemeral' } },
            ...(request.system.dynamic ? [{ type: 'text' as const, text: request.system.dynamic }] : []),
          ],
          messages: request.messages,
          tools: request.tools,
          max_tokens: request.max_tokens,
        },
        { signal },
      );
      for await (const event of messageStream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
          yield { type: 'text_delta', text: event.delta.text };
        }
      }
      yield { type: 'message', message: await messageStream.finalMessage() };
    } catch (error) {
      throw toModelError(error, options.baseURL, signal);
    }
  };
}

/** Names the cause of a failed call in words a user can act on. */
export function toModelError(error: unknown, endpoint: string, signal?: AbortSignal): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof APIUserAbortError || signal?.aborted) {
    return new ModelError({ code: 'aborted', message: 'Stopped.' });
  }
  if (error instanceof APIConnectionError) {
    return new ModelError({
      code: 'model_unreachable',
      message: `Could not reach the model endpoint at ${endpoint}. Check your connection, or that the proxy is running.`,
      retryable: true,
    });
  }
  if (error instanceof APIError) {
    return new ModelError(apiErrorShape(error), retryAfterMs(error.headers));
  }
  const message = error instanceof Error ? error.message : String(error);
  // The SDK reports a stream cut off mid-way as a plain AnthropicError ("terminated").
  return new ModelError({
    code: 'model_stream_broken',
    message: `The model's reply was cut off: ${message || 'the stream ended unexpectedly'}.`,
    retryable: true,
  });
}

/** Status is undefined for an `event: error` sent mid-stream; its type still names the cause. */
function apiErrorShape(error: APIError): ErrorShape {
  const status = error.status ?? 0;
  const detail = error.apiMessage ?? error.message;
  if (error.type === ('proxy_not_configured' as string)) {
    return { code: 'model_not_configured', message: detail };
  }
  // The proxy does not know this device (never paired, revoked, expired): pairing is the way on.
  if (status === 401 && typeof error.type === 'string' && error.type.startsWith('device_')) {
    return { code: 'model_not_configured', message: detail };
  }
  // A day's quota: waiting minutes will not help.
  if (error.type === ('device_daily_limit' as string)) {
    return { code: 'model_rate_limited', message: detail };
  }
  if (status === 429) {
    return { code: 'model_rate_limited', message: `The model is rate limited: ${detail}`, retryable: true };
  }
  if (status === 529 || error.type === 'overloaded_error') {
    return { code: 'model_overloaded', message: `The model is overloaded: ${detail}`, retryable: true };
  }
  if (status >= 500) {
    return { code: 'model_error', message: `The model service failed (${status}): ${detail}`, retryable: true };
  }
  if (status === 0) {
    return { code: 'model_error', message: `The model stream failed: ${detail}`, retryable: true };
  }
  return { code: 'model_rejected', message: `The model refused the request (${status}): ${detail}` };
}

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const seconds = headers?.get('retry-after');
  if (!seconds) return undefined;
  if (Number.isFinite(Number(seconds))) return Number(seconds) * 1000;
  const date = Date.parse(seconds);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
