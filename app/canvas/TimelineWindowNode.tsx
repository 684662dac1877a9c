// The Timeline window: the stack's checkpoints, newest first — what each was taken before, what
// changed since the one before, the room it added — with "Checkpoint now", and for each: open it
// as a new stack, or restore the stack to it (asked first; the stack as it is is kept as a
// checkpoint of its own). A restore the agent proposed is marked with its reason. The list is read
// when the window opens and again after each `checkpoint_taken` event.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import { formatBytes, type CheckpointInfo, type CheckpointList } from '../../worker/protocol.ts';
import { StackCallError } from '../stack-client.ts';
import { useStackClient } from '../stack-context.ts';
import { StackClosedError } from '../stack-actions.ts';
import { currentStackId, layoutOf, listStacks } from '../stacks.ts';
import { useAppStore } from '../store.ts';
import { useStackActions } from '../useStackActions.ts';
import type { TimelineWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

type Asking = { kind: 'restore'; id: string } | { kind: 'open'; id: string; name: string } | null;

export const TimelineWindowNode = memo(function TimelineWindowNode({ data, selected }: NodeProps<TimelineWindowNodeType>) {
  const client = useStackClient();
  const stackId = currentStackId();
  const actions = useStackActions(stackId);
  const checkpointSeq = useAppStore((state) => state.view.checkpointSeq);
  const [list, setList] = useState<CheckpointList | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [asking, setAsking] = useState<Asking>(null);
  const proposed = data.window.proposed;

  const read = () =>
    client
      .call('list_checkpoints', {})
      .then(setList)
      .catch((error: unknown) => setProblem(error instanceof StackCallError ? error.message : 'The checkpoints could not be read.'));
  useEffect(() => void read(), [client, checkpointSeq]);

  const act = async (doing: string, work: () => Promise<unknown>) => {
    setProblem(null);
    setBusy(doing);
    try {
      await work();
    } catch (error) {
      // A restore that failed after the stack closed: the page must open it again to go on.
      const closed = error instanceof StackClosedError;
      setProblem(`${error instanceof Error ? error.message : String(error)}${closed ? ' Reload the page to open the stack again.' : ''}`);
    } finally {
      setBusy(null);
    }
  };

  const stackName = listStacks().find((entry) => entry.id === stackId)?.name ?? 'Stack';
  const tools = (
    <div class="table-tools nodrag" role="group" aria-label="Timeline">
      <button
        type="button"
        class="window-tool"
        disabled={busy !== null}
        onClick={() => void act('Taking a checkpoint…', () => client.call('take_checkpoint', { layout: layoutOf(stackId) }).then(read))}
        title="Keep the whole stack as it is now: files, the computer, chat and tables"
      >
        Checkpoint now
      </button>
    </div>
  );

  return (
    <WindowFrame window={data.window} selected={selected} tools={tools} scrolls>
      {problem && (
        <p class="window-problem" role="alert">
          {problem}
        </p>
      )}
      <p class="timeline-status" aria-live="polite">
        {busy ?? (list ? `${list.checkpoints.length} checkpoint${list.checkpoints.length === 1 ? '' : 's'}, ${formatBytes(list.bytes)} in all · kept: ${list.rule}` : '')}
      </p>
      {list === null ? (
        !problem && <p class="tasks-empty">Reading the checkpoints…</p>
      ) : list.checkpoints.length === 0 ? (
        <p class="tasks-empty">No checkpoints yet. One is taken before each request that changes something, or now with “Checkpoint now”.</p>
      ) : (
        <ul class="tasks-list nodrag" aria-label="Checkpoints">
          {list.checkpoints.map((checkpoint) => {
            const isProposed = proposed?.checkpoint_id === checkpoint.id;
            const when = formatTime(checkpoint.created_at);
            return (
              <li key={checkpoint.id} class={`task checkpoint${isProposed ? ' checkpoint--proposed' : ''}`} aria-label={`${when}: ${title(checkpoint)}`}>
                <div class="task-head">
                  <strong class="task-title">{title(checkpoint)}</strong>
                  <span class="task-status">{when}</span>
                </div>
                <p class="task-schedule" title={changedPaths(checkpoint)}>
                  {summary(checkpoint)} · {formatBytes(checkpoint.added_bytes)} added
                </p>
                {isProposed && <p class="checkpoint-proposal">The agent proposes going back here: {proposed!.reason}</p>}
                {asking?.id === checkpoint.id && asking.kind === 'restore' ? (
                  <div class="checkpoint-confirm" role="group" aria-label="Restore this checkpoint?">
                    <p>
                      Bring the whole stack back to {when}? Files, the computer, chat and tables return to how they were then. The stack as it is now is kept as a
                      checkpoint first, so you can come back.
                    </p>
                    <div class="task-actions">
                      <button type="button" class="window-tool" disabled={busy !== null} onClick={() => void act('Restoring… the stack reopens when done.', () => actions.restoreCheckpoint(checkpoint.id))}>
                        Restore
                      </button>
                      <button type="button" class="window-tool" onClick={() => setAsking(null)}>
                        Cancel
                      </button>
                    </div>
                  </div>
                ) : asking?.id === checkpoint.id && asking.kind === 'open' ? (
                  <form
                    class="checkpoint-confirm task-editor"
                    aria-label="Open as a new stack"
                    onSubmit={(event) => {
                      event.preventDefault();
                      void act('Making the new stack…', () => actions.openCheckpoint(checkpoint.id, asking.name));
                    }}
                  >
                    <label>
                      Name of the new stack
                      <input value={asking.name} maxLength={200} onInput={(event) => setAsking({ ...asking, name: (event.target as HTMLInputElement).value })} />
                    </label>
                    <div class="task-actions">
                      <button type="submit" class="window-tool" disabled={busy !== null || !asking.name.trim()}>
                        Open
                      </button>
                      <button type="button" class="window-tool" onClick={() => setAsking(null)}>
                        Cancel
                      </button>
                    </div>
                  </form>
                ) : (
                  <div class="task-actions" role="group" aria-label={`${when}: actions`}>
                    <button type="button" class="window-tool" disabled={busy !== null} onClick={() => setAsking({ kind: 'restore', id: checkpoint.id })}>
                      Restore…
                    </button>
                    <button type="button" class="window-tool" disabled={busy !== null} onClick={() => setAsking({ kind: 'open', id: checkpoint.id, name: `${stackName} at ${when}`.slice(0, 200) })}>
                      Open as new stack
                    </button>
                    <button
                      type="button"
                      class="window-tool"
                      disabled={busy !== null}
                      onClick={() => {
                        if (confirm(`Delete the checkpoint of ${when}? What only it holds is gone for good.`)) void act('Deleting…', () => client.call('delete_checkpoint', { checkpoint_id: checkpoint.id }).then(setList));
                      }}
                    >
                      Delete
                    </button>
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </WindowFrame>
  );
});

function title(checkpoint: CheckpointInfo): string {
  switch (checkpoint.reason) {
    case 'manual':
      return checkpoint.label || 'Checkpoint now';
    case 'before_restore':
      return checkpoint.label;
    case 'scheduled':
      return `Before a scheduled task: ${checkpoint.label}`;
    case 'mission':
      return `Before “${checkpoint.label}”`;
  }
}

/** What changed since the checkpoint before it, in a line. */
export function summary(checkpoint: CheckpointInfo): string {
  const { added, removed, changed, computer, databases } = checkpoint.changes;
  const count = (n: number, word: string) => (n ? [`${n} file${n === 1 ? '' : 's'} ${word}`] : []);
  const parts = [...count(added.length, 'added'), ...count(changed.length, 'changed'), ...count(removed.length, 'removed'), ...(computer ? ['computer'] : []), ...(databases ? ['chat and tables'] : [])];
  return parts.length ? parts.join(', ') : 'nothing changed since the one before';
}

function changedPaths(checkpoint: CheckpointInfo): string {
  const { added, removed, changed } = checkpoint.changes;
  return [...added.map((path) => `+ ${path}`), ...changed.map((path) => `~ ${path}`), ...removed.map((path) => `− ${path}`)].join('\n');
}

function formatTime(at: number): string {
  return new Date(at).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}
