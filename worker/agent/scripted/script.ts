// The fake model's script format: what each request receives, and what it must look like.
// Plain JSON so a test in another process can POST it to /_fake/script or keep it in a .json file.
// checkScript/parseScript validate untrusted input with path-precise messages; see ./check.ts.

/** A whole script. Turns answer model requests in order, one request per turn (see `repeat`). */
export interface FakeScript {
  /** Named in failure messages, so a broken test says which script it was running. */
  name: string;
  turns: FakeTurn[];
}

export interface FakeTurn {
  /** Assertions on the request this turn answers; a failure is recorded and returned as a 400. */
  expect?: Expect;
  reply: Reply;
  /**
   * How many requests this turn answers in total (default 1); -1 = every request from here on,
   * for benchmarks. Turns after a -1 turn are unreachable, so the validator rejects them.
   */
  repeat?: number;
}

export type Reply = MessageReply | ErrorReply;

/** A successful assistant message, streamed as SSE when the request has `stream: true`. */
export interface MessageReply {
  content: ScriptBlock[];
  /** Default: "tool_use" when any block is a tool_use, else "end_turn". */
  stop_reason?: StopReason;
  /** Required when stop_reason is "stop_sequence" (the API says which sequence matched). */
  stop_sequence?: string;
  /**
   * Default: input_tokens = ceil(request body bytes / 4), output_tokens = ceil(content chars / 4),
   * cache counters 0 — deterministic, and growing with the conversation like the real figures.
   */
  usage?: ScriptUsage;
  /** Text and tool-input JSON are cut into deltas of this many characters (default 8). */
  chunk_chars?: number;
  /** Pause before every SSE event (or before the whole JSON reply when not streaming). */
  delay_ms?: number;
  /**
   * Send this many SSE events, then send nothing more but keep the connection open until the
   * client goes away — the upstream side of a "stop" button. Not streaming: never answer.
   */
  hang_after_events?: number;
  /**
   * Send this many SSE events, then destroy the socket mid-body — a broken stream.
   * Not streaming: destroy the socket before any response.
   */
  break_after_events?: number;
  /**
   * Send `after_events` SSE events, then an `event: error` and end the body, as the API does
   * when it overloads mid-stream. Not streaming: an HTTP error (overloaded_error -> 529).
   */
  stream_error?: StreamError;
}

export type ScriptBlock = ScriptTextBlock | ScriptToolUseBlock;

export interface ScriptTextBlock {
  type: 'text';
  text: string;
}

export interface ScriptToolUseBlock {
  type: 'tool_use';
  name: string;
  /** The tool's arguments; streamed as input_json_delta partial_json chunks. */
  input: Record<string, unknown>;
  /**
   * Default: toolu_fake_<turn>_<block> (0-based script turn and block indexes), with _<k> added
   * for the k-th repetition of a repeated turn so ids stay unique within a conversation.
   */
  id?: string;
}

export interface ScriptUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export interface StreamError {
  after_events: number;
  /** Default "overloaded_error". */
  type?: string;
  /** Default: the usual message for the type. */
  message?: string;
}

/** An HTTP error response in the API's `{"type":"error","error":{...}}` shape. */
export interface ErrorReply {
  error: {
    status: number;
    /** Default from status: 429 rate_limit_error, 529 overloaded_error, 500 api_error, ... */
    type?: string;
    message?: string;
    /** Extra response headers, e.g. {"retry-after": "1"} or {"x-should-retry": "false"}. */
    headers?: Record<string, string>;
  };
}

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

/** Checks on the request a turn answers. Every given check must hold. */
export interface Expect {
  /** Substring of the text of the last user message (string content or its text blocks). */
  last_user_text?: string;
  /** A tool_result block in the last user message matching every given field. */
  tool_result?: {
    tool_use_id?: string;
    /** Substring of the result's text (string content or its text blocks). */
    contains?: string;
    /** An absent is_error counts as false, as the API treats it. */
    is_error?: boolean;
  };
  /** Substring of `system` (string or text blocks). */
  system_contains?: string;
  model?: string;
  /** Names that must all appear in `tools`. */
  has_tools?: string[];
  /** Lower-cased names. A string must equal the header; null means the header must be absent. */
  headers?: Record<string, string | null>;
}

export function isErrorReply(reply: Reply): reply is ErrorReply {
  return 'error' in reply;
}

