// The browser's storage for this origin is full: telling it apart from other failures, and
// saying so in words a person can act on (what the quota is and how much is left: storage/quota.ts).
import { DbFullError } from '../memory/index.ts';
import { isQuotaFailure, type StorageEstimateLike } from '../storage/quota.ts';
import { formatBytes } from '../protocol/wording.ts';

/** A quota failure from OPFS, or SQLite's answer to one (memory/ types those as DbFullError). */
export function isStorageFull(error: unknown): boolean {
  return error instanceof DbFullError || isQuotaFailure(error);
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
