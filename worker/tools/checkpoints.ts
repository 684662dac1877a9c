// list_checkpoints and propose_restore: the agent sees the stack's checkpoints (when, why, what
// changed) and may propose going back to one. Only the user restores: the proposal opens the
// timeline with that checkpoint marked and the reason beside it.
import { z } from 'zod';
import type { CheckpointInfo, CheckpointList } from '../../protocol/checkpoints.ts';
import { defineTool } from './define-tool.ts';

export function createListCheckpointsTool(list: () => Promise<CheckpointList>) {
  return defineTool({
    name: 'list_checkpoints',
    description:
      'List the stack\'s checkpoints, newest first: each holds the whole stack (files, the computer, chat, tables) as it was before a mission changed something, or when the user asked. Use it when the user wants to undo a change or see an earlier state.',
    schema: z.object({}),
    title: () => 'Listing checkpoints',
    async run() {
      const { checkpoints, bytes, rule } = await list();
      if (checkpoints.length === 0) return 'There are no checkpoints yet.';
      const lines = checkpoints.map((checkpoint) => `- ${checkpoint.id} · ${new Date(checkpoint.created_at).toISOString()} · ${describe(checkpoint)}`);
      return `${checkpoints.length} checkpoints (${(bytes / 1024 / 1024).toFixed(1)} MB; kept: ${rule}):\n${lines.join('\n')}`;
    },
  });
}

export function createProposeRestoreTool(propose: (checkpointId: string, reason: string) => Promise<void>) {
  return defineTool({
    name: 'propose_restore',
    description:
      'Propose bringing the whole stack back to a checkpoint (from list_checkpoints). It does not restore anything: it opens the timeline with the checkpoint marked and your reason, and the user decides. Everything after the checkpoint would be replaced, so say what would be lost.',
    schema: z.object({
      checkpoint_id: z.string().min(1).max(64).describe('The checkpoint\'s id, from list_checkpoints.'),
      reason: z.string().min(1).max(500).describe('Why, in a sentence the user reads: what going back would undo.'),
    }),
    title: () => 'Proposing a restore',
    async run(input) {
      await propose(input.checkpoint_id, input.reason);
      return 'The timeline now shows the proposal; the user decides whether to restore. Do not assume it was restored.';
    },
  });
}

function describe(checkpoint: CheckpointInfo): string {
  const { added, removed, changed, counts, computer, databases } = checkpoint.changes;
  // The paths are the first few of each kind; the counts are all of them.
  const named = (verb: string, paths: string[], count: number) => (count === 0 ? '' : `${verb} ${paths.join(', ')}${count > paths.length ? ` and ${count - paths.length} more` : ''}`);
  const parts = [
    named('added', added, counts.added),
    named('removed', removed, counts.removed),
    named('changed', changed, counts.changed),
    computer ? 'the computer changed' : '',
    databases ? 'chat or tables changed' : '',
  ].filter(Boolean);
  const why = checkpoint.reason === 'manual' ? 'taken by the user' : checkpoint.reason === 'before_restore' ? 'taken before a restore' : `before: ${checkpoint.label}`;
  return `${why}${parts.length ? ` (since the one before: ${parts.join('; ')})` : ''}`;
}
