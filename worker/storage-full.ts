// The browser's storage for this origin is full: telling it apart from other failures, and
// saying so in words a person can act on.
import { DbFullError } from '../memory/index.ts';
import { isQuotaError } from '../vm/opfs-write.ts';

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

/** "<what>: the browser's storage for Stackdocs is full (it holds 2.2 GB). Delete …" */
export function storageFullMessage(what: string, usage?: number): string {
  const held = usage ? ` (it holds ${usage >= 1e9 ? `${(usage / 1e9).toFixed(1)} GB` : `${Math.max(1, Math.round(usage / 1e6))} MB`})` : '';
  return `${what}: the browser's storage for Stackdocs is full${held}. Delete documents or stacks you no longer need, or free space on this device, then try again.`;
}
