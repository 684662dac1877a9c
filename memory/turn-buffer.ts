// Collects one agent turn in memory — the user's message, a summary of each tool call, the
// agent's answer — until the turn ends and becomes one observation.
import type { ToolCallSummary } from './transcript-store.ts';
import { OBSERVATION_LIMITS, truncateText } from './truncate.ts';

export interface ToolCallInput {
  name: string;
  input?: unknown;
  /** The tool's result text as the model read it. */
  output?: string;
  ok: boolean;
}

export interface BufferedTurn {
  userMessage: string;
  toolCalls: ToolCallSummary[];
  agentResponse: string;
}

const INPUT_PREVIEW = 400;

export class TurnBuffer {
  #userMessage = '';
  #toolCalls: ToolCallSummary[] = [];
  #dropped = 0;
  #response: string[] = [];
  #responseLength = 0;

  setUserMessage(text: string): void {
    this.#userMessage = String(text ?? '');
  }

  /** Stores a summary (name, input, output) cut to OBSERVATION_LIMITS.toolSummary characters. */
  addToolCall(call: ToolCallInput): void {
    if (this.#toolCalls.length >= OBSERVATION_LIMITS.toolCalls) {
      this.#dropped++;
      return;
    }
    this.#toolCalls.push(summariseToolCall(call));
  }

  /** Replaces the agent's answer (e.g. the final text of the turn). */
  setAgentResponse(text: string): void {
    this.#response = [];
    this.#responseLength = 0;
    this.appendAgentText(text);
  }

  /** Adds streamed text; beyond twice the stored limit it is only counted (the store cuts anyway). */
  appendAgentText(text: string): void {
    const piece = String(text ?? '');
    if (this.#responseLength < OBSERVATION_LIMITS.agentResponse * 2) this.#response.push(piece);
    this.#responseLength += piece.length;
  }

  get isEmpty(): boolean {
    return !this.#userMessage && this.#toolCalls.length === 0 && this.#responseLength === 0;
  }

  /** Returns the turn and clears the buffer; undefined when nothing was buffered. */
  take(): BufferedTurn | undefined {
    if (this.isEmpty) return undefined;
    const toolCalls = [...this.#toolCalls];
    if (this.#dropped) toolCalls.push({ name: '(more)', ok: true, summary: `... and ${this.#dropped} more tool calls, not recorded` });
    const agentResponse = truncateText(this.#response.join(''), OBSERVATION_LIMITS.agentResponse, this.#responseLength);
    const turn = { userMessage: this.#userMessage, toolCalls, agentResponse };
    this.clear();
    return turn;
  }

  clear(): void {
    this.#userMessage = '';
    this.#toolCalls = [];
    this.#dropped = 0;
    this.#response = [];
    this.#responseLength = 0;
  }
}

/** `name(input) -> output`, cut to the per-call limit; never throws on odd input. */
export function summariseToolCall(call: ToolCallInput): ToolCallSummary {
  const input = call.input === undefined ? '' : truncateText(safeJson(call.input), INPUT_PREVIEW);
  const output = call.output ? ` -> ${call.output}` : '';
  const name = String(call.name ?? 'tool');
  const target = targetOf(call.input);
  return {
    name,
    ok: Boolean(call.ok),
    summary: truncateText(`${name}(${input})${output}`, OBSERVATION_LIMITS.toolSummary),
    ...(target ? { target } : {}),
  };
}

const TARGET_FIELDS = ['path', 'url', 'command', 'document_id', 'window_id', 'pattern'];

/** The first of a call's path, url, command… fields, cut to one short line. */
function targetOf(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const fields = input as Record<string, unknown>;
  const value = TARGET_FIELDS.map((field) => fields[field]).find((v): v is string => typeof v === 'string' && v.trim() !== '');
  return value === undefined ? undefined : truncateText(value.replace(/\s+/g, ' ').trim(), 120);
}

function safeJson(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}
