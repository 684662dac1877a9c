// Typed model errors: a stream function throws these so the loop can decide to retry or stop.
import type { ErrorShape } from '../../protocol/errors.ts';

export class ModelError extends Error {
  readonly shape: ErrorShape;
  /** From the server's retry-after header, when it sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(shape: ErrorShape, retryAfterMs?: number) {
    super(shape.message);
    this.name = 'ModelError';
    this.shape = shape;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Turns anything thrown into a plain error shape for the boundary. */
export function toErrorShape(error: unknown): ErrorShape {
  if (error instanceof ModelError) return error.shape;
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal', message: message || 'Unexpected error' };
}

/** Exponential backoff with jitter, or the server's own retry-after when given (capped). */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, random = Math.random): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, 60_000);
  }
  const base = Math.min(500 * 2 ** (attempt - 1), 8_000);
  return Math.round(base * (0.75 + random() * 0.5));
}

/** Resolves after `ms`, or rejects at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
