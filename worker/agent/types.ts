// Types of the agent loop: what a model stream yields, what a tool is, what the loop reports.
import type {
  Message,
  MessageParam,
  Tool as ToolSpec,
} from '@anthropic-ai/sdk/resources/messages';
import type { ErrorShape } from '../../protocol/errors.ts';
import type { Usage } from '../../protocol/missions.ts';

export type { Message, MessageParam, ToolSpec };

/**
 * The system prompt in two parts: `stable` (instructions, memory) is the same turn after turn and
 * is marked for prompt caching; `dynamic` (canvas state, attachments) follows it, uncached.
 */
export interface SystemPrompt {
  stable: string;
  dynamic: string;
}

export interface ModelRequest {
  model: string;
  system: SystemPrompt;
  messages: MessageParam[];
  tools: ToolSpec[];
  max_tokens: number;
}

/** What a stream function yields: text as it arrives, then the whole assistant message once. */
export type ModelStreamEvent = { type: 'text_delta'; text: string } | { type: 'message'; message: Message };

/**
 * Streams one model call. Throws on failure (the loop classifies the error); must stop promptly
 * and throw when `signal` aborts.
 */
export type StreamFn = (request: ModelRequest, signal: AbortSignal) => AsyncIterable<ModelStreamEvent>;

/** A tool's result as the model reads it. Failures are results too, never exceptions. */
export interface ToolResult {
  content: string;
  is_error?: boolean;
}

export interface ToolContext {
  signal: AbortSignal;
  tool_use_id: string;
}

/** A tool the loop can run: what the model sees (`spec`) and how to run it. */
export interface AgentTool {
  spec: ToolSpec;
  /** A short human name for the UI, e.g. "Opening a notes window". Must not throw. */
  title(input: unknown): string;
  /**
   * The error result for input the tool would refuse, or null when it is valid. Checked before
   * the permission gate, so the user is never asked about a call that cannot run. Must not throw.
   */
  invalid?(input: unknown): ToolResult | null;
  /** Must not throw: invalid input and failures come back as `is_error` results. */
  execute(input: unknown, context: ToolContext): Promise<ToolResult>;
}

/** What the loop reports while it runs. Listeners must not throw. */
export type LoopEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'message_end'; stop_reason: string | null; usage: Usage }
  | { type: 'tool_started'; tool_use_id: string; name: string; title: string; input: unknown }
  | { type: 'tool_finished'; tool_use_id: string; name: string; input: unknown; result: ToolResult }
  | { type: 'retry'; attempt: number; delay_ms: number; reason: string };

/** `promptTokens`: the size of the last prompt sent, so the next mission knows when to compact. */
export type LoopOutcome =
  | { status: 'completed'; messages: MessageParam[]; usage: Usage; promptTokens: number }
  | { status: 'aborted'; messages: MessageParam[]; usage: Usage; promptTokens: number }
  | { status: 'failed'; messages: MessageParam[]; usage: Usage; error: ErrorShape; promptTokens: number };
