// A stack from elsewhere: where it came from and what it brought, each item held until its owner
// answers (worker/trust.ts).

/**
 * Where a stack came from, when not from this browser: a `.stack` file (imported, opened from the
 * OS or shared to the app) or a template file. A stack made here has none and is its owner's.
 */
export type StackOrigin = 'stack_file' | 'template_file';

/** One thing a stack from elsewhere would do, held until its owner allows it (worker/trust.ts). */
export interface TrustItem {
  /** Stable for the stack: `hook:…`, `task:<id>`, `endpoint`, … */
  id: string;
  kind: 'endpoint' | 'ocr' | 'network' | 'heartbeat' | 'hook' | 'mcp' | 'rule' | 'skill' | 'task' | 'hosts';
  /** What it would do, in plain words. */
  title: string;
  /** Exactly what: the command, schedule, address, rule or hosts. */
  detail: string;
  /** The owner's answer; null: not reviewed yet (held). */
  allowed: boolean | null;
}

/**
 * A stack from elsewhere: restricted (it runs and sends nothing it brought) until its owner
 * reviews what it would enable; null for a stack made here.
 */
export interface TrustState {
  origin: StackOrigin;
  /** The file's name, when known. */
  file_name: string | null;
  /** When it arrived (epoch ms). */
  arrived_at: number;
  /** True until the owner has reviewed it. */
  restricted: boolean;
  items: TrustItem[];
}
