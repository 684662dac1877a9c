// Checkpoints as the timeline shows them.

/** A checkpoint as the timeline shows it: when, why, what changed since the one before, its room. */
export interface CheckpointInfo {
  id: string;
  created_at: number;
  reason: 'mission' | 'manual' | 'scheduled' | 'before_restore';
  label: string;
  /** The paths (the first 50 of each kind), how many of each kind in all, and whether the computer and the databases changed. */
  changes: { added: string[]; removed: string[]; changed: string[]; counts: { added: number; removed: number; changed: number }; computer: boolean; databases: boolean };
  /** Bytes it added to the checkpoints' room; the stack's whole size at that point. */
  added_bytes: number;
  total_bytes: number;
}

export interface CheckpointList {
  checkpoints: CheckpointInfo[];
  /** The room every checkpoint takes together (they share what did not change). */
  bytes: number;
  /** The rule old ones are pruned by, in words. */
  rule: string;
}
