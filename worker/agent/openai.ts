// A stream function for OpenAI-compatible chat completion endpoints with tool calling (a local
// model server, for fully offline work). It speaks that wire format and hands the loop the same
// events and message shape the Anthropic stream does.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ModelError } from './errors.ts';
import type { Message, MessageParam, ModelRequest, ModelStreamEvent, StreamFn } from './types.ts';

export interface OpenAIStreamOptions {
  /** e.g. http://127.0.0.1:11434/v1 — requests go to `${baseURL}/chat/completions`. */
  baseURL: string;
  apiKey?: string | null;
  fetch?: typeof globalThis.fetch;
}

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

interface ChunkDelta {
  content?: string | null;
  tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
}

interface Chunk {
  choices?: { delta?: ChunkDelta; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

export function createOpenAIStream(options: OpenAIStreamOptions): StreamFn {
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;

  return async function* stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamEvent> {
    let response: Response;
    try {
      response = await fetchFn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify(toChatRequest(request)),
        signal,
      });
    } catch {
      if (signal.aborted) throw new ModelError({ code: 'aborted', message: 'Stopped.' });
      throw new ModelError({ code: 'model_unreachable', message: `Could not reach the model endpoint at ${options.baseURL}.`, retryable: true });
    }
    if (!response.ok || !response.body) throw await httpError(response);

    const text: string[] = [];
    const calls: { id: string; name: string; args: string }[] = [];
    let finish: string | null = null;
    let usage = { input_tokens: 0, output_tokens: 0 };
    const pending: ModelStreamEvent[] = [];
    let streamError: string | null = null;

    const parser = createParser({
      onEvent(event: EventSourceMessage) {
        if (event.data === '[DONE]') return;
        let chunk: Chunk;
        try {
          chunk = JSON.parse(event.data) as Chunk;
        } catch {
          return; // keep-alive comments and junk lines are not ours to fail on
        }
        if (chunk.error) streamError = chunk.error.message ?? 'error event';
        if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens ?? 0, output_tokens: chunk.usage.completion_tokens ?? 0 };
        const choice = chunk.choices?.[0];
        if (!choice) return;
        if (choice.finish_reason) finish = choice.finish_reason;
        const delta = choice.delta ?? {};
        if (delta.content) {
          text.push(delta.content);
          pending.push({ type: 'text_delta', text: delta.content });
        }
        for (const call of delta.tool_calls ?? []) {
          const slot = (calls[call.index] ??= { id: call.id ?? `call_${call.index}`, name: '', args: '' });
          if (call.id) slot.id = call.id;
          if (call.function?.name) slot.name += call.function.name;
          if (call.function?.arguments) slot.args += call.function.arguments;
        }
      },
    });

    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
        yield* pending.splice(0);
        if (streamError) throw new ModelError({ code: 'model_error', message: `The model stream failed: ${streamError}`, retryable: true });
      }
    } catch (error) {
      if (error instanceof ModelError) throw error;
      if (signal.aborted) throw new ModelError({ code: 'aborted', message: 'Stopped.' });
      throw new ModelError({ code: 'model_stream_broken', message: "The model's reply was cut off: the stream ended unexpectedly.", retryable: true });
    }
    if (finish === null) {
      throw new ModelError({ code: 'model_stream_broken', message: "The model's reply was cut off: the stream ended without a finish reason.", retryable: true });
    }
    yield { type: 'message', message: toMessage(request.model, text.join(''), calls, finish, usage) };
  };
}

function toChatRequest(request: ModelRequest) {
  const system = [request.system.stable, request.system.dynamic].filter(Boolean).join('\n\n');
  return {
    model: request.model,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: request.max_tokens,
    messages: [{ role: 'system', content: system } as ChatMessage, ...request.messages.flatMap(toChatMessages)],
    ...(request.tools.length
      ? { tools: request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } })) }
      : {}),
  };
}

/** One Anthropic-shaped message becomes one or more chat messages (tool results are their own). */
export function toChatMessages(message: MessageParam): ChatMessage[] {
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  const texts = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
  if (message.role === 'assistant') {
    const calls = message.content.flatMap((block) =>
      block.type === 'tool_use' ? [{ id: block.id, type: 'function' as const, function: { name: block.name, arguments: JSON.stringify(block.input) } }] : [],
    );
    return [{ role: 'assistant', content: texts.join('\n') || null, ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  const results: ChatMessage[] = message.content.flatMap((block) =>
    block.type === 'tool_result'
      ? [{ role: 'tool' as const, tool_call_id: block.tool_use_id, content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? '') }]
      : [],
  );
  return texts.length ? [...results, { role: 'user', content: texts.join('\n') }] : results;
}

function toMessage(model: string, text: string, calls: { id: string; name: string; args: string }[], finish: string, usage: { input_tokens: number; output_tokens: number }): Message {
  const content: Message['content'] = [];
  if (text) content.push({ type: 'text', text, citations: null });
  for (const call of calls.filter(Boolean)) {
    let input: unknown;
    try {
      input = call.args ? JSON.parse(call.args) : {};
    } catch {
      input = { _unparsed_arguments: call.args }; // the tool's validation tells the model what went wrong
    }
    content.push({ type: 'tool_use', id: call.id, name: call.name, input } as Message['content'][number]);
  }
  const stop = finish === 'tool_calls' || calls.length ? 'tool_use' : finish === 'length' ? 'max_tokens' : 'end_turn';
  return {
    id: `chatcmpl_${Date.now()}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  } as Message;
}

async function httpError(response: Response): Promise<ModelError> {
  const body = (await response.json().catch(() => null)) as { error?: { message?: string } | string } | null;
  const detail = (typeof body?.error === 'string' ? body.error : body?.error?.message) ?? response.statusText ?? 'no details';
  const status = response.status;
  if (status === 429) return new ModelError({ code: 'model_rate_limited', message: `The model is rate limited: ${detail}`, retryable: true });
  if (status >= 500) return new ModelError({ code: 'model_error', message: `The model service failed (${status}): ${detail}`, retryable: true });
  if (status === 401 || status === 403) return new ModelError({ code: 'model_not_configured', message: `The model endpoint refused the key (${status}): ${detail}` });
  return new ModelError({ code: 'model_rejected', message: `The model refused the request (${status}): ${detail}` });
}
