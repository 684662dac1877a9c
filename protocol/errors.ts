// How a failure crosses a worker boundary: a code and a message, never an Error instance; and
// `assertNever`, which ends every switch over this folder's unions.

/** A plain error shape: what crosses a worker boundary instead of an Error instance. */
export interface ErrorShape {
  code: ErrorCode;
  message: string;
  retryable?: boolean;
}

export type ErrorCode =
  | 'bad_request'
  | 'not_found'
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
  /** A stack file over the size an import takes without asking: the user may say yes (`allowLarge`). */
  | 'too_large'
  | 'interrupted'
  | 'demo_unavailable'
  | 'demo_off_script'
  | 'hook_blocked'
  /** A mission (with its subagents) reached the token budget set in Settings. */
  | 'budget'
  | 'internal';

/** For exhaustive switches over the unions above: a compile error when a case is missing. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
