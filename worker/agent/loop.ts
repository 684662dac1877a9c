// The agent loop: call the model, run the tools it asks for, feed back the results, repeat.
// It is a function of an injected stream function, so it is tested with a fake stream.
import type { ErrorShape } from '../../protocol/errors.ts';
import type { Usage } from '../../protocol/missions.ts';
import { ModelError, retryDelayMs, sleep as defaultSleep, toErrorShape } from './errors.ts';
import { addUsage, emptyUsage, usageOf } from './pricing.ts';
import type {
  AgentTool,
  LoopEvent,
  LoopOutcome,
  Message,
  MessageParam,
  StreamFn,
  SystemPrompt,
  ToolResult,
} from './types.ts';

export interface LoopOptions {
  stream: StreamFn;
  tools: AgentTool[];
  model: string;
  /** Read before every model call, so what it holds (memory, the canvas) can change mid-mission. */
  system: () => SystemPrompt;
  /** The conversation so far, ending with the user's new message. Not mutated. */
  messages: MessageParam[];
  signal: AbortSignal;
  /** Must not throw; if it does, the error is swallowed so the loop goes on. */
  onEvent: (event: LoopEvent) => void;
  maxTurns?: number;
  /** Retries per model call for retryable errors (429, 529, 5xx, network). */
  maxRetries?: number;
  maxTokens?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Asked before every tool call (permission rules). Must not throw. A refusal becomes the tool's
   * error result, so the model reads why and can choose another way.
   */
  /**
   * Called before each model call with the last prompt's size in tokens. Returns
   * replacement messages when it compacted the conversation, else null. Must not throw.
   */
  /** The size of the conversation's last prompt, from an earlier mission. */
  promptTokens?: number;
  compact?: (messages: MessageParam[], promptTokens: number, signal: AbortSignal) => Promise<MessageParam[] | null>;
  authorize?: (call: { tool_use_id: string; name: string; title: string; input: unknown }, signal: AbortSignal) => Promise<{ allow: true } | { allow: false; reason: string }>;
  /**
   * Called after each tool call that ran (not one refused or unknown) with its result; returns
   * the result the model reads (e.g. with a hook's words added). Must not throw.
   */
  afterTool?: (call: { tool_use_id: string; name: string; input: unknown }, result: ToolResult, signal: AbortSignal) => Promise<ToolResult>;
}

type CallResult = { ok: true; message: Message } | { ok: false; error: ErrorShape };

const ABORTED: ErrorShape = { code: 'aborted', message: 'Stopped.' };

/** Runs until the model stops asking for tools. Never throws. */
export async function runAgentLoop(options: LoopOptions): Promise<LoopOutcome> {
  const { signal, maxTurns = 25 } = options;
  const emit = safeEmitter(options.onEvent);
  const messages = [...options.messages];
  let usage: Usage = emptyUsage();
  let promptTokens = options.promptTokens ?? 0;
  const end = (error?: ErrorShape): LoopOutcome => {
    if (signal.aborted || error?.code === 'aborted') return { status: 'aborted', messages, usage, promptTokens };
    return error ? { status: 'failed', messages, usage, error, promptTokens } : { status: 'completed', messages, usage, promptTokens };
  };

  for (let turn = 0; turn < maxTurns; turn++) {
    if (options.compact) {
      const compacted = await options.compact(messages, promptTokens, signal);
      if (compacted) messages.splice(0, messages.length, ...compacted);
    }
    const call = await callModel(options, messages, emit);
    if (!call.ok) return end(call.error);
    const { message } = call;
    const callUsage = usageOf(message.usage, options.model);
    promptTokens = callUsage.input_tokens + callUsage.cache_creation_input_tokens + callUsage.cache_read_input_tokens;
    usage = addUsage(usage, callUsage);
    messages.push({ role: 'assistant', content: message.content });
    emit({ type: 'message_end', stop_reason: message.stop_reason, usage: callUsage });

    const toolUses = message.content.filter((block) => block.type === 'tool_use');
    if (toolUses.length === 0) return end();

    // Parallel tool calls run together; results go back in the order the model asked.
    const results = await Promise.all(
      toolUses.map((use) => runTool(options, use.id, use.name, use.input, emit)),
    );
    messages.push({
      role: 'user',
      content: toolUses.map((use, i) => ({
        type: 'tool_result' as const,
        tool_use_id: use.id,
        content: results[i]!.content,
        ...(results[i]!.is_error ? { is_error: true } : {}),
      })),
    });
    if (signal.aborted) return end(ABORTED);
  }
  return end({
    code: 'turn_limit',
    message: `Stopped after ${maxTurns} model calls without finishing (the turn limit).`,
  });
}

async function callModel(
  options: LoopOptions,
  messages: MessageParam[],
  emit: (event: LoopEvent) => void,
): Promise<CallResult> {
  const { signal, maxRetries = 2 } = options;
  const sleep = options.sleep ?? defaultSleep;
  const request = {
    model: options.model,
    system: options.system(),
    messages,
    tools: options.tools.map((tool) => tool.spec),
    max_tokens: options.maxTokens ?? 8192,
  };
  for (let attempt = 1; ; attempt++) {
    let streamedText = false;
    try {
      for await (const event of options.stream(request, signal)) {
        if (event.type === 'text_delta') {
          streamedText = true;
          emit({ type: 'text_delta', text: event.text });
        } else {
          return { ok: true, message: event.message };
        }
      }
      return { ok: false, error: { code: 'model_stream_broken', message: 'The model stream ended without a message.' } };
    } catch (error) {
      if (signal.aborted) return { ok: false, error: ABORTED };
      const shape = toErrorShape(error);
      // Text already shown cannot be taken back, so a failure after it is final.
      const canRetry = shape.retryable === true && !streamedText && attempt <= maxRetries;
      if (!canRetry) return { ok: false, error: shape };
      const delay = retryDelayMs(attempt, error instanceof ModelError ? error.retryAfterMs : undefined);
      emit({ type: 'retry', attempt, delay_ms: delay, reason: shape.message });
      try {
        await sleep(delay, signal);
      } catch {
        return { ok: false, error: ABORTED };
      }
    }
  }
}

async function runTool(
  options: LoopOptions,
  toolUseId: string,
  name: string,
  input: unknown,
  emit: (event: LoopEvent) => void,
): Promise<ToolResult> {
  const tool = options.tools.find((candidate) => candidate.spec.name === name);
  const title = tool ? safeTitle(tool, input) : name;
  emit({ type: 'tool_started', tool_use_id: toolUseId, name, title, input });
  let result: ToolResult;
  if (!tool) {
    const known = options.tools.map((candidate) => candidate.spec.name).join(', ');
    result = { content: `Unknown tool "${name}". Available tools: ${known || 'none'}.`, is_error: true };
  } else if (options.signal.aborted) {
    result = { content: 'Not run: the user stopped the mission.', is_error: true };
  } else if (tool.invalid?.(input)) {
    result = tool.invalid(input)!;
  } else {
    try {
      const verdict = options.authorize ? await options.authorize({ tool_use_id: toolUseId, name, title, input }, options.signal) : { allow: true as const };
      if (verdict.allow) {
        result = await tool.execute(input, { signal: options.signal, tool_use_id: toolUseId });
        if (options.afterTool) result = await options.afterTool({ tool_use_id: toolUseId, name, input }, result, options.signal).catch(() => result);
      } else {
        result = { content: `Not run. ${verdict.reason}`, is_error: true };
      }
    } catch (error) {
      result = { content: `Tool failed: ${toErrorShape(error).message}`, is_error: true };
    }
  }
  emit({ type: 'tool_finished', tool_use_id: toolUseId, name, input, result });
  return result;
}

function safeTitle(tool: AgentTool, input: unknown): string {
  try {
    return tool.title(input);
  } catch {
    return tool.spec.name;
  }
}

function safeEmitter(listener: (event: LoopEvent) => void): (event: LoopEvent) => void {
  return (event) => {
    try {
      listener(event);
    } catch {
      // A broken listener must not break the mission.
    }
  };
}
