import { describe, expect, it } from 'vitest';
import type { CheckpointInfo } from '../../protocol/checkpoints.ts';
import { createListCheckpointsTool, createProposeRestoreTool } from './checkpoints.ts';

const context = { signal: new AbortController().signal, tool_use_id: 't1' };

function checkpoint(id: string, parts: Partial<CheckpointInfo> & { added?: string[]; added_count?: number } = {}): CheckpointInfo {
  const added = parts.added ?? [];
  return {
    id,
    created_at: Date.UTC(2026, 10, 28, 10, 0, 0),
    reason: parts.reason ?? 'mission',
    label: parts.label ?? 'tidy up',
    changes: { added, removed: [], changed: ['notes.md'], counts: { added: parts.added_count ?? added.length, removed: 0, changed: 1 }, computer: true, databases: false },
    added_bytes: 1_000,
    total_bytes: 2_000,
  };
}

describe('checkpoint tools', () => {
  it('lists the checkpoints with what changed, counting the files not named', async () => {
    const list = createListCheckpointsTool(async () => ({
      checkpoints: [checkpoint('c-2', { reason: 'manual', label: '' }), checkpoint('c-1', { added: ['a.txt', 'b.txt'], added_count: 120 })],
      bytes: 3 * 1024 * 1024,
      rule: 'the newest 20',
    }));
    const { content } = await list.execute({}, context);
    expect(content).toContain('2 checkpoints (3.0 MB; kept: the newest 20)');
    expect(content).toContain('- c-2 · 2026-11-28T10:00:00.000Z · taken by the user (since the one before: changed notes.md; the computer changed)');
    expect(content).toContain('before: tidy up (since the one before: added a.txt, b.txt and 118 more; changed notes.md; the computer changed)');
    expect((await createListCheckpointsTool(async () => ({ checkpoints: [], bytes: 0, rule: '' })).execute({}, context)).content).toBe('There are no checkpoints yet.');
  });

  it('proposes a restore and reports a checkpoint that is not there', async () => {
    const proposed: string[] = [];
    const propose = createProposeRestoreTool(async (id, reason) => {
      if (id !== 'c-1') throw new Error(`there is no checkpoint ${id}; list_checkpoints names them`);
      proposed.push(`${id}: ${reason}`);
    });
    expect((await propose.execute({ checkpoint_id: 'c-1', reason: 'the notes were deleted' }, context)).is_error).toBeFalsy();
    expect(proposed).toEqual(['c-1: the notes were deleted']);
    const missing = await propose.execute({ checkpoint_id: 'c-9', reason: 'x' }, context);
    expect(missing).toMatchObject({ is_error: true });
    expect(missing.content).toContain('there is no checkpoint c-9');
  });
});
