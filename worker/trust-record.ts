// The trust record of a stack from elsewhere (`.os/config/trust.json`): where it came from, what
// it brought (held at its first open, trust.ts) and its owner's answers. Apart from trust.ts so
// the stacks worker can write a new one without the stack's code.
import type { StackOrigin } from '../protocol/trust.ts';
import type { Held } from './trust.ts';

export const TRUST_FILE = 'trust.json';

export interface TrustFile {
  version: 1;
  origin: StackOrigin;
  file_name?: string;
  arrived_at: number;
  /** `pending`: held is recorded but the stack's own files may still hold some of it. */
  intake?: 'pending' | 'done';
  held?: Held;
  decisions: Record<string, boolean>;
  /** The rule each allowed rule item became (the gate gives rules new ids). */
  applied_rules?: Record<string, string>;
  reviewed_at: number | null;
}

/** Writes the record a stack from a file starts with: restricted, nothing held yet (the first open takes it). */
export function newTrustRecord(origin: StackOrigin, fileName: string | null, now: number): TrustFile {
  return { version: 1, origin, ...(fileName ? { file_name: fileName.slice(0, 200) } : {}), arrived_at: now, decisions: {}, reviewed_at: null };
}

export function isTrustFile(value: unknown): value is TrustFile {
  const file = value as Partial<TrustFile> | null;
  return (
    !!file &&
    typeof file === 'object' &&
    file.version === 1 &&
    (file.origin === 'stack_file' || file.origin === 'template_file') &&
    typeof file.arrived_at === 'number' &&
    !!file.decisions &&
    typeof file.decisions === 'object' &&
    (file.reviewed_at === null || typeof file.reviewed_at === 'number')
  );
}

