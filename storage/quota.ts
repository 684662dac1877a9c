// The origin's storage quota: telling a refusal for room apart from other failures, and asking
// the browser how much is used and granted. The words shown to the user are the caller's.

/** The origin's use and quota, when the browser says (both in bytes). */
export interface StorageEstimateLike {
  usage?: number | undefined;
  quota?: number | undefined;
}

/** The browser's refusal for room: a `QuotaExceededError`, whatever raised it. */
export function isQuotaError(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'QuotaExceededError';
}

/** A quota refusal, or an error caused by one (up to five `cause`s deep). */
export function isQuotaFailure(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (isQuotaError(cause)) return true;
  }
  return false;
}

/** How much the origin holds and may hold, when the browser says; undefined elsewhere (Node). */
export async function storageEstimate(): Promise<StorageEstimateLike | undefined> {
  return globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
}

/** How much the origin holds now, when the browser says. */
export async function storageUsage(): Promise<number | undefined> {
  return (await storageEstimate())?.usage;
}
