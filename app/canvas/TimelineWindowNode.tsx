// The Timeline window: the stack's checkpoints, newest first — what each was taken before, what
// changed since the one before, the room it added — with "Checkpoint now", and for each: open it
// as a new stack, or restore the stack to it (asked first; the stack as it is is kept as a
// checkpoint of its own). A restore the agent proposed is marked with its reason. The list is read
// when the window opens, after each `checkpoint_taken` event and after the user's own changes.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CheckpointInfo, CheckpointList } from '../../protocol/checkpoints.ts';
import type { TimelineWindow } from '../../protocol/windows.ts';
import { formatBytes } from '../../protocol/wording.ts';
import { PAGE_KIOSK } from '../kiosk/kiosk.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { StackClosedError } from '../stacks/stack-actions.ts';
import { layoutOf, listStacks, openStack } from '../stacks/stacks.ts';
import { useAppStore } from '../connection/store.ts';
import { useStackActions } from '../stacks/useStackActions.ts';
import { changedPaths, changesSummary, checkpointTime, checkpointTitle } from './checkpoint-text.ts';
import type { TimelineWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

/** What the window is doing: `leaving` — a restore or a new stack is opening this tab anew; `closed` — a restore failed after the stack closed. */
type Phase = { state: 'idle' } | { state: 'busy' | 'leaving'; doing: string } | { state: 'closed' };
/** The row asking the user something before acting. */
type Asking = { kind: 'restore'; id: string } | { kind: 'open'; id: string; name: string } | null;

export const TimelineWindowNode = memo(function TimelineWindowNode({ data, selected }: NodeProps<TimelineWindowNodeType>) {
  const client = useStackClient();
  // The stack this tab holds (not `currentStackId()`: another tab may have changed the last one used since).
  const stackId = client.stackId;
  const actions = useStackActions(stackId);
  const checkpointSeq = useAppStore((state) => state.view.checkpointSeq);
  const [list, setList] = useState<CheckpointList | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [phase, setPhase] = useState<Phase>({ state: 'idle' });
  const [asking, setAsking] = useState<Asking>(null);
  const reads = useRef(0);
  const proposed = data.window.proposed;
  // A kiosk's visitors look but do not go back (the kiosk starts over from its owner's reset point).
  const readOnly = PAGE_KIOSK !== null;
  const idle = phase.state === 'idle';

  const read = async () => {
    // Only the newest read answers: an older list arriving late must not replace it.
    const mine = ++reads.current;
    try {
      const fresh = await client.call('list_checkpoints', {});
      if (mine === reads.current) setList(fresh);
    } catch (error) {
      if (mine === reads.current) setProblem(error instanceof StackCallError ? error.message : 'The checkpoints could not be read.');
    }
  };
  useEffect(() => void read(), [client, checkpointSeq]);

  /** A checkpoint just taken, listed at once; the list read again after (pruning may have removed others). */
  const shown = (taken: CheckpointInfo) => {
    reads.current++; // a read already under way predates it
    setList((known) => known && { ...known, checkpoints: [taken, ...known.checkpoints.filter((checkpoint) => checkpoint.id !== taken.id)], bytes: known.bytes + taken.added_bytes });
    void read();
  };

  /** Runs `work` with `doing` shown; `leaves`: on success this tab opens a stack anew, so it stays busy. */
  const act = async (doing: string, work: () => Promise<unknown>, leaves = false) => {
    setProblem(null);
    setPhase({ state: leaves ? 'leaving' : 'busy', doing });
    try {
      await work();
      if (!leaves) setPhase({ state: 'idle' });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof StackClosedError) {
        setProblem(`${message} The stack is closed: open it again to go on.`);
        setPhase({ state: 'closed' });
      } else {
        setProblem(message || 'That did not work.');
        setPhase({ state: 'idle' });
      }
    }
  };

  const stackName = listStacks().find((entry) => entry.id === stackId)?.name ?? 'Stack';
  const tools = readOnly ? undefined : (
    <div class="table-tools nodrag" role="group" aria-label="Timeline">
      <button
        type="button"
        class="window-tool"
        disabled={!idle}
        onClick={() => void act('Taking a checkpoint…', () => client.call('take_checkpoint', { layout: layoutOf(stackId) }).then(shown))}
        title="Keep the whole stack as it is now: files, the computer, chat and tables"
      >
        Checkpoint now
      </button>
    </div>
  );

  const controls: RowControls = {
    idle,
    asking,
    setAsking,
    stackName,
    restore: (id) => void act('Restoring… the stack opens again when it is done.', () => actions.restoreCheckpoint(id), true),
    openAsStack: (id, name) => void act('Making the new stack…', () => actions.openCheckpoint(id, name), true),
    remove: (id, when) => {
      if (confirm(`Delete the checkpoint of ${when}? What only it holds is gone for good.`)) void act('Deleting…', () => client.call('delete_checkpoint', { checkpoint_id: id }).then(setList));
    },
  };

  const proposalGone = proposed && list && !list.checkpoints.some((checkpoint) => checkpoint.id === proposed.checkpoint_id);
  return (
    <WindowFrame window={data.window} selected={selected} tools={tools} scrolls>
      {problem && (
        <div class="window-problem" role="alert">
          {problem}
          {phase.state === 'closed' && (
            <button type="button" class="window-tool" onClick={() => openStack(stackId)}>
              Open the stack again
            </button>
          )}
        </div>
      )}
      <p class="timeline-status" aria-live="polite">
        {phase.state === 'busy' || phase.state === 'leaving'
          ? phase.doing
          : list && `${list.checkpoints.length} checkpoint${list.checkpoints.length === 1 ? '' : 's'} · ${formatBytes(list.bytes)} in all · kept: ${list.rule}`}
      </p>
      {readOnly && <p class="tasks-empty">Checkpoints are not restored in a kiosk: its owner can, after leaving it.</p>}
      {proposalGone && <p class="checkpoint-proposal">The agent proposed going back to a checkpoint that is no longer kept: {proposed.reason}</p>}
      {list === null ? (
        !problem && <p class="tasks-empty">Reading the checkpoints…</p>
      ) : list.checkpoints.length === 0 ? (
        <p class="tasks-empty">No checkpoints yet. One is taken before each request that changes something, or now with “Checkpoint now”.</p>
      ) : (
        <ul class="tasks-list nodrag" aria-label="Checkpoints">
          {list.checkpoints.map((checkpoint) => (
            <CheckpointRow key={checkpoint.id} checkpoint={checkpoint} proposed={proposed} readOnly={readOnly} controls={controls} />
          ))}
        </ul>
      )}
    </WindowFrame>
  );
});

/** What a checkpoint's row may do, through the window (which shows what is under way). */
interface RowControls {
  idle: boolean;
  asking: Asking;
  setAsking(asking: Asking): void;
  /** The stack's name, which a new stack from a checkpoint starts from. */
  stackName: string;
  restore(id: string): void;
  openAsStack(id: string, name: string): void;
  /** Asks first, naming the checkpoint by `when`. */
  remove(id: string, when: string): void;
}

/** One checkpoint: when, what it was taken before, what changed, and its actions or the question under way. */
function CheckpointRow({ checkpoint, proposed, readOnly, controls }: { checkpoint: CheckpointInfo; proposed: TimelineWindow['proposed']; readOnly: boolean; controls: RowControls }) {
  const isProposed = proposed?.checkpoint_id === checkpoint.id;
  const when = checkpointTime(checkpoint.created_at);
  const title = checkpointTitle(checkpoint);
  const paths = changedPaths(checkpoint.changes);
  const asking = controls.asking;
  return (
    <li class={`task checkpoint${isProposed ? ' checkpoint--proposed' : ''}`} aria-label={`${when}: ${title}`}>
      <div class="task-head">
        <strong class="task-title">{title}</strong>
        <span class="task-status">{when}</span>
      </div>
      <p class="task-schedule" title={paths.join('\n') || undefined}>
        {changesSummary(checkpoint.changes)} · {formatBytes(checkpoint.added_bytes)} added
      </p>
      {paths.length > 0 && (
        <details class="checkpoint-files">
          <summary>Which files</summary>
          <pre>{paths.join('\n')}</pre>
        </details>
      )}
      {isProposed && <p class="checkpoint-proposal">The agent proposes going back here: {proposed.reason}</p>}
      {!readOnly &&
        (asking?.id !== checkpoint.id ? (
          <RowActions checkpoint={checkpoint} when={when} controls={controls} />
        ) : asking.kind === 'restore' ? (
          <RestoreConfirm checkpoint={checkpoint} when={when} controls={controls} />
        ) : (
          <OpenPrompt checkpoint={checkpoint} open={asking} controls={controls} />
        ))}
    </li>
  );
}

function RestoreConfirm({ checkpoint, when, controls }: { checkpoint: CheckpointInfo; when: string; controls: RowControls }) {
  const { idle } = controls;
  return (
    <div class="checkpoint-confirm" role="group" aria-label="Restore this checkpoint?">
      <p>
        Bring the whole stack back to {when}? Files, the computer, chat and tables return to how they were then. The stack as it is now is kept as a checkpoint first,
        so you can come back.
      </p>
      <div class="task-actions">
        <button type="button" class="window-tool window-tool--primary" disabled={!idle} onClick={() => controls.restore(checkpoint.id)}>
          Restore
        </button>
        <button type="button" class="window-tool" disabled={!idle} onClick={() => controls.setAsking(null)}>
          Cancel
        </button>
      </div>
    </div>
  );
}

function OpenPrompt({ checkpoint, open, controls }: { checkpoint: CheckpointInfo; open: { id: string; name: string }; controls: RowControls }) {
  const { idle } = controls;
  return (
    <form
      class="checkpoint-confirm task-editor"
      aria-label="Open as a new stack"
      onSubmit={(event) => {
        event.preventDefault();
        if (open.name.trim()) controls.openAsStack(checkpoint.id, open.name.trim());
      }}
    >
      <label>
        Name of the new stack
        <input value={open.name} maxLength={200} required autoFocus onInput={(event) => controls.setAsking({ kind: 'open', id: open.id, name: event.currentTarget.value })} />
      </label>
      <div class="task-actions">
        <button type="submit" class="window-tool window-tool--primary" disabled={!idle || !open.name.trim()}>
          Open
        </button>
        <button type="button" class="window-tool" disabled={!idle} onClick={() => controls.setAsking(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function RowActions({ checkpoint, when, controls }: { checkpoint: CheckpointInfo; when: string; controls: RowControls }) {
  const { idle, setAsking } = controls;
  return (
    <div class="task-actions" role="group" aria-label={`${when}: actions`}>
      <button type="button" class="window-tool" disabled={!idle} onClick={() => setAsking({ kind: 'restore', id: checkpoint.id })}>
        Restore…
      </button>
      <button type="button" class="window-tool" disabled={!idle} onClick={() => setAsking({ kind: 'open', id: checkpoint.id, name: `${controls.stackName} at ${when}`.slice(0, 200) })}>
        Open as new stack
      </button>
      <button type="button" class="window-tool" disabled={!idle} onClick={() => controls.remove(checkpoint.id, when)}>
        Delete
      </button>
    </div>
  );
}
