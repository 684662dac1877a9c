// The Timeline window's words for a checkpoint: what it was taken before, what changed since the
// one before, and when — kept apart from the component so the wording is tested.
import type { CheckpointInfo } from '../../protocol/checkpoints.ts';

/** Paths listed in a row's detail at most; the first checkpoint of a stack may add thousands. */
export const MAX_PATHS_SHOWN = 50;

/** What the checkpoint was taken before, as its row's title. */
export function checkpointTitle(checkpoint: Pick<CheckpointInfo, 'reason' | 'label'>): string {
  switch (checkpoint.reason) {
    case 'manual':
      return checkpoint.label || 'Checkpoint now';
    case 'before_restore':
      return checkpoint.label || 'Before going back';
    case 'scheduled':
      return `Before the scheduled task “${checkpoint.label}”`;
    case 'mission':
      return `Before “${checkpoint.label}”`;
  }
}

/** What changed since the checkpoint before it, in one line: "2 files added, 1 changed · the computer · chat and tables". */
export function changesSummary(changes: CheckpointInfo['changes']): string {
  const counts = (
    [
      [changes.counts.added, 'added'],
      [changes.counts.changed, 'changed'],
      [changes.counts.removed, 'removed'],
    ] as const
  ).filter(([count]) => count > 0);
  // Only the first count names the files: "2 files added, 1 changed".
  const files = counts.map(([count, verb], i) => (i === 0 ? `${count} ${count === 1 ? 'file' : 'files'} ${verb}` : `${count} ${verb}`)).join(', ');
  const parts = [files, changes.computer ? 'the computer' : '', changes.databases ? 'chat and tables' : ''].filter(Boolean);
  return parts.length ? parts.join(' · ') : 'Nothing changed since the one before';
}

/** The changed paths, one a line ("+ added", "~ changed", "− removed"), at most MAX_PATHS_SHOWN and then how many more; empty when none. */
export function changedPaths(changes: CheckpointInfo['changes']): string[] {
  const all = [...changes.added.map((path) => `+ ${path}`), ...changes.changed.map((path) => `~ ${path}`), ...changes.removed.map((path) => `− ${path}`)];
  const total = changes.counts.added + changes.counts.changed + changes.counts.removed;
  const shown = all.slice(0, MAX_PATHS_SHOWN);
  return total > shown.length ? [...shown, `and ${total - shown.length} more`] : shown;
}

/** When, in the user's local time, to the second (two checkpoints can be a minute apart). */
export function checkpointTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}
