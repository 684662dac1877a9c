import { describe, expect, it } from 'vitest';
import type { CheckpointInfo } from '../../protocol/checkpoints.ts';
import { changedPaths, changesSummary, checkpointTitle, MAX_PATHS_SHOWN } from './checkpoint-text.ts';

/** A checkpoint's changes whose counts are its lists' lengths unless given (the worker lists 50 of each at most). */
function changes(parts: Partial<Omit<CheckpointInfo['changes'], 'counts'>> & { counts?: Partial<CheckpointInfo['changes']['counts']> } = {}): CheckpointInfo['changes'] {
  const { added = [], removed = [], changed = [], computer = false, databases = false } = parts;
  return { added, removed, changed, computer, databases, counts: { added: added.length, removed: removed.length, changed: changed.length, ...parts.counts } };
}

describe('checkpoint text', () => {
  it('names what each checkpoint was taken before', () => {
    expect(checkpointTitle({ reason: 'mission', label: 'clean up' })).toBe('Before “clean up”');
    expect(checkpointTitle({ reason: 'scheduled', label: 'Weekly invoices' })).toBe('Before the scheduled task “Weekly invoices”');
    expect(checkpointTitle({ reason: 'manual', label: '' })).toBe('Checkpoint now');
    expect(checkpointTitle({ reason: 'before_restore', label: 'Before going back to Mar 3, 10:02:11' })).toBe('Before going back to Mar 3, 10:02:11');
  });

  it('sums up what changed in a line, naming the files once', () => {
    expect(changesSummary(changes({ added: ['a.txt', 'b.txt'], changed: ['c.csv'], removed: ['d.pdf'], computer: true, databases: true }))).toBe(
      '2 files added, 1 changed, 1 removed · the computer · chat and tables',
    );
    expect(changesSummary(changes({ changed: ['c.csv'] }))).toBe('1 file changed');
    expect(changesSummary(changes({ databases: true }))).toBe('chat and tables');
    expect(changesSummary(changes())).toBe('Nothing changed since the one before');
  });

  it('counts every changed file, not only the ones listed', () => {
    const first = changes({ added: Array.from({ length: 50 }, (_, i) => `f${i}`), counts: { added: 3_120 } });
    expect(changesSummary(first)).toBe('3120 files added');
    const paths = changedPaths(first);
    expect(paths).toHaveLength(MAX_PATHS_SHOWN + 1);
    expect(paths.at(-1)).toBe(`and ${3_120 - MAX_PATHS_SHOWN} more`);
  });

  it('lists the changed paths, cut short past a limit', () => {
    expect(changedPaths(changes({ added: ['a'], changed: ['b'], removed: ['c'] }))).toEqual(['+ a', '~ b', '− c']);
    const many = changedPaths(changes({ added: Array.from({ length: MAX_PATHS_SHOWN + 3 }, (_, i) => `f${i}`) }));
    expect(many).toHaveLength(MAX_PATHS_SHOWN + 1);
    expect(many.at(-1)).toBe('and 3 more');
    expect(changedPaths(changes())).toEqual([]);
  });
});
