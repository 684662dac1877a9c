// The trust record of a stack from elsewhere (`.os/config/trust.json`): where it came from, what
// it brought (held at its first open, trust.ts) and its owner's answers. Apart from trust.ts so
// the stacks worker can write a new one without the stack's code.
import type { StackOrigin } from '../protocol/trust.ts';
import type { PermissionRule } from '../protocol/permissions.ts';
import type { Settings } from '../protocol/settings.ts';

/** The settings fields that reach out or run work on their own; held from a stack from elsewhere. */
export interface HeldSettings {
  provider?: Settings['provider'];
  endpoint?: string;
  ocr_engine?: Settings['ocr_engine'];
  computer_network?: boolean;
  heartbeat_minutes?: number;
}

export interface HeldHook {
  event: string;
  matcher?: string;
  command: string;
  timeout?: number;
}

export interface HeldTask {
  id: string;
  title: string;
  prompt: string;
  schedule: string;
}

export interface Held {
  settings: HeldSettings;
  hooks: HeldHook[];
  /** MCP servers as their file had them, by name. */
  mcp: Record<string, Record<string, unknown>>;
  rules: PermissionRule[];
  skills: { name: string; description: string }[];
  tasks: HeldTask[];
  hosts: string[];
}

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

