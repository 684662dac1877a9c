// The browser's storage for this origin is full: telling it apart from other failures, and
// saying so in words a person can act on.
import { DbFullError } from '../memory/index.ts';
import { isQuotaError } from '../vm/opfs-write.ts';
import { formatBytes } from '../protocol/wording.ts';

/** A quota failure from OPFS, or SQLite's answer to one (memory/ types those as DbFullError). */
export function isStorageFull(error: unknown): boolean {
  if (error instanceof DbFullError) return true;
  for (let cause: unknown = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (isQuotaError(cause)) return true;
  }
  return false;
}

/** How much the origin holds now, when the browser says. */
export async function storageUsage(): Promise<number | undefined> {
  const estimate = await globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
  return estimate?.usage;
}

/** The origin's use and quota, when the browser says (both in bytes). */
export interface StorageEstimateLike {
  usage?: number | undefined;
  quota?: number | undefined;
}

/** How much the origin holds and may hold, when the browser says; undefined elsewhere (Node). */
export async function storageEstimate(): Promise<StorageEstimateLike | undefined> {
  return globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
}

/** "<what>: the browser's storage for Stackdocs is full (it holds 2.2 GB). Delete …" */
export function storageFullMessage(what: string, usage?: number): string {
  const held = usage ? ` (it holds ${formatBytes(usage)})` : '';
  return `${what}: the browser's storage for Stackdocs is full${held}. ${WHAT_TO_DO}`;
}

/**
 * Null when `needed` more bytes fit in what the browser still grants this origin (or it does not
 * say); else the storage-full message for something that will not fit, naming both sizes:
 * "<what>: it needs 30 MB and the browser's storage for Stackdocs has 12 MB left (it holds 2.2 GB). Delete …"
 */
export function noRoomMessage(what: string, needed: number, estimate: StorageEstimateLike | undefined): string | null {
  const { usage, quota } = estimate ?? {};
  if (typeof usage !== 'number' || typeof quota !== 'number' || !(quota > 0)) return null;
  const left = Math.max(0, quota - usage);
  if (needed <= left) return null;
  return `${what}: it needs ${formatBytes(needed)} and the browser's storage for Stackdocs has ${formatBytes(left)} left (it holds ${formatBytes(usage)}). ${WHAT_TO_DO}`;
}

const WHAT_TO_DO = 'Delete documents or stacks you no longer need, or free space on this device, then try again.';
