// The one protocol between the app and a stack worker: requests, responses, events, the API.
// `app/` imports this module as types only (plus `assertNever`), so nothing here may touch the DOM
// or any worker-only API.

/** A plain error shape: what crosses a worker boundary instead of an Error instance. */
export interface ErrorShape {
  code: ErrorCode;
  message: string;
  retryable?: boolean;
}

export type ErrorCode =
  | 'bad_request'
  | 'busy'
  | 'model_not_configured'
  | 'model_unreachable'
  | 'model_rate_limited'
  | 'model_overloaded'
  | 'model_error'
  | 'model_stream_broken'
  | 'model_rejected'
  | 'aborted'
  | 'turn_limit'
  | 'storage'
  | 'internal';

// ---------------------------------------------------------------------------------------------
// Settings

export interface Settings {
  /** Base URL of the model endpoint: the proxy, which holds the key (never the browser). */
  endpoint: string;
  /** Anthropic model id sent with every request. */
  model: string;
}

// ---------------------------------------------------------------------------------------------
// Canvas windows (the agent owns content; the user owns geometry, which lives in the app)

export type WindowKind = 'notes';

export interface NotesWindow {
  id: string;
  kind: 'notes';
  title: string;
  /** Markdown. */
  content: string;
  created_at: number;
  updated_at: number;
}

export type CanvasWindow = NotesWindow;

// ---------------------------------------------------------------------------------------------
// Requests and responses: `{id, method, params}` answered by `{request_id, ok, result | error}`

export interface RequestMap {
  /** Start a chat mission. Resolves once it is accepted, not when it finishes. */
  mission: { params: { text: string }; result: { mission_id: string } };
  /** Stop the running mission (or the named one). */
  abort: { params: { mission_id?: string }; result: { aborted: boolean } };
  get_settings: { params: Record<string, never>; result: Settings };
  update_settings: { params: Partial<Settings>; result: Settings };
  /** Re-check that the model endpoint answers (emits `model_status`). */
  check_model: { params: Record<string, never>; result: ModelStatus };
  /** A user action on the canvas the agent should know about. */
  canvas_interaction: { params: CanvasInteraction; result: Record<string, never> };
}

export type Method = keyof RequestMap;
export type ParamsOf<M extends Method> = RequestMap[M]['params'];
export type ResultOf<M extends Method> = RequestMap[M]['result'];

export type StackRequest<M extends Method = Method> = {
  [K in M]: { id: string; method: K; params: ParamsOf<K> };
}[M];

export type StackResponse<M extends Method = Method> =
  | { request_id: string; ok: true; result: ResultOf<M> }
  | { request_id: string; ok: false; error: ErrorShape };

export type CanvasInteraction = { type: 'window_closed'; window_id: string };

// ---------------------------------------------------------------------------------------------
// Events: every one carries a monotonic `seq` so a client can resume after an offset

export type ModelStatus =
  | { state: 'unknown' }
  | { state: 'ready'; endpoint: string }
  | { state: 'not_configured'; endpoint: string; message: string }
  | { state: 'unreachable'; endpoint: string; message: string };

export type MissionStatus = 'completed' | 'failed' | 'aborted';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export type StackEventBody =
  | { type: 'mission_started'; mission_id: string; request_id: string; text: string }
  | { type: 'assistant_delta'; mission_id: string; text: string }
  | { type: 'assistant_message_end'; mission_id: string; stop_reason: string | null; usage: Usage }
  | { type: 'tool_started'; mission_id: string; tool_use_id: string; name: string; title: string }
  | {
      type: 'tool_finished';
      mission_id: string;
      tool_use_id: string;
      name: string;
      ok: boolean;
      summary: string;
    }
  | { type: 'model_retry'; mission_id: string; attempt: number; delay_ms: number; reason: string }
  | { type: 'mission_finished'; mission_id: string; status: MissionStatus; error?: ErrorShape }
  | { type: 'window_opened'; window: CanvasWindow }
  | { type: 'window_updated'; window: CanvasWindow }
  | { type: 'window_closed'; window_id: string }
  | { type: 'settings_changed'; settings: Settings }
  | { type: 'model_status'; status: ModelStatus };

export type StackEvent = StackEventBody & { seq: number; at: number };
export type StackEventType = StackEvent['type'];

// ---------------------------------------------------------------------------------------------
// The API a stack worker exposes over comlink

export type EventListener = (events: StackEvent[]) => void;

export interface StackApi {
  /** Must not throw: every failure comes back as `{ok: false, error}`. */
  request<M extends Method>(request: StackRequest<M>): Promise<StackResponse<M>>;
  /**
   * Delivers every event with `seq > afterSeq` (those already logged first, in order), then
   * each new batch as it happens. Returns the last seq delivered so far.
   */
  subscribe(afterSeq: number, listener: EventListener): Promise<{ last_seq: number }>;
  /** What the canvas shows now: open windows, current settings and model status. */
  snapshot(): Promise<StackSnapshot>;
}

export interface StackSnapshot {
  windows: CanvasWindow[];
  settings: Settings;
  model: ModelStatus;
  last_seq: number;
}

/** For exhaustive switches over the unions above: a compile error when a case is missing. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
