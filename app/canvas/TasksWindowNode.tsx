// The Tasks window: the stack's scheduled tasks — when each runs next, how its latest runs went
// (missed, retried, failed with the error) — and the user's controls: pause or resume, run now,
// edit, delete. The list is fetched when the window opens; `task_changed` events keep it current.
import type { NodeProps } from '@xyflow/react';
import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import type { TaskInfo, TaskRunInfo, TaskScheduleInput } from '../../protocol/tasks.ts';
import { mergeTasks } from '../connection/events.ts';
import { StackCallError } from '../connection/stack-client.ts';
import { useStackClient } from '../connection/stack-context.ts';
import { useAppStore } from '../connection/store.ts';
import type { TasksWindowNodeType } from './window-nodes.ts';
import { WindowFrame } from './WindowFrame.tsx';

const STATUS_LABEL: Record<TaskInfo['status'], string> = { active: 'Active', paused: 'Paused', done: 'Done', failed: 'Failed' };

export const TasksWindowNode = memo(function TasksWindowNode({ data, selected }: NodeProps<TasksWindowNodeType>) {
  const client = useStackClient();
  const events = useAppStore((state) => state.view.tasks);
  const [fetched, setFetched] = useState<{ tasks: TaskInfo[]; seq: number } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [permission, setPermission] = useState(notificationPermission());

  useEffect(() => {
    const seq = useAppStore.getState().view.lastSeq;
    client
      .call('list_tasks', {})
      .then((tasks) => setFetched({ tasks, seq }))
      .catch((error: unknown) => setProblem(error instanceof StackCallError ? error.message : 'The tasks could not be read.'));
  }, [client]);

  const tasks = fetched ? mergeTasks(fetched.tasks, fetched.seq, events) : null;
  const act = async (work: () => Promise<unknown>, failed: string) => {
    setProblem(null);
    try {
      await work();
      return true;
    } catch (error) {
      setProblem(error instanceof StackCallError ? error.message : failed);
      return false;
    }
  };

  const tools =
    permission === 'default' ? (
      <div class="table-tools nodrag" role="group" aria-label="Tasks">
        <button type="button" class="window-tool" onClick={() => void Notification.requestPermission().then(setPermission)} title="A notification when a run finishes while this tab is in the background">
          Notify me
        </button>
      </div>
    ) : undefined;

  return (
    <WindowFrame window={data.window} selected={selected} tools={tools} scrolls>
      {problem && (
        <p class="window-problem" role="alert">
          {problem}
        </p>
      )}
      {tasks === null ? (
        !problem && <p class="tasks-empty">Reading the tasks…</p>
      ) : tasks.length === 0 ? (
        <p class="tasks-empty">No scheduled tasks yet. Ask the agent, e.g. “every Monday at 9, reconcile the week’s invoices”.</p>
      ) : (
        <ul class="tasks-list nodrag" aria-label="Scheduled tasks">
          {tasks.map((task) => (
            <li key={task.id} class={`task task--${task.status}`} aria-label={task.title}>
              {editing === task.id ? (
                <TaskEditor
                  task={task}
                  onCancel={() => setEditing(null)}
                  onSave={async (change) => {
                    if (await act(() => client.call('update_task', { task_id: task.id, ...change }), 'The task was not saved.')) setEditing(null);
                  }}
                />
              ) : (
                <>
                  <div class="task-head">
                    <strong class="task-title">{task.title}</strong>
                    <span class="task-status" data-status={task.status}>
                      {task.running ? 'Running' : STATUS_LABEL[task.status]}
                    </span>
                  </div>
                  <p class="task-schedule">
                    {scheduleText(task)}
                    {task.next_run_at !== null && task.status === 'active' && <> · next {formatTime(task.next_run_at)}</>}
                  </p>
                  <TaskRuns runs={task.runs} />
                  <div class="task-actions" role="group" aria-label={`${task.title}: actions`}>
                    {(task.status === 'active' || task.status === 'paused') && (
                      <button type="button" class="window-tool" onClick={() => void act(() => client.call('update_task', { task_id: task.id, paused: task.status === 'active' }), 'The task did not change.')}>
                        {task.status === 'active' ? 'Pause' : 'Resume'}
                      </button>
                    )}
                    <button type="button" class="window-tool" disabled={task.running} onClick={() => void act(() => client.call('run_task', { task_id: task.id }), 'The task did not start.')}>
                      Run now
                    </button>
                    <button type="button" class="window-tool" onClick={() => setEditing(task.id)}>
                      Edit
                    </button>
                    <button
                      type="button"
                      class="window-tool"
                      onClick={() => {
                        if (confirm(`Delete the task "${task.title}" and its run history?`)) void act(() => client.call('delete_task', { task_id: task.id }), 'The task was not deleted.');
                      }}
                    >
                      Delete
                    </button>
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </WindowFrame>
  );
});

function TaskRuns({ runs }: { runs: TaskRunInfo[] }) {
  if (!runs.length) return <p class="task-runs-none">Not run yet.</p>;
  return (
    <ol class="task-runs" aria-label="Latest runs">
      {runs.slice(0, 5).map((run) => (
        <li key={run.id} class="task-run" data-status={run.status}>
          {runText(run)}
        </li>
      ))}
    </ol>
  );
}

/** One run in words: when, how it went, its retries, and whether it was missed. */
export function runText(run: TaskRunInfo): string {
  const retries = Math.max(0, run.attempts - 1);
  const parts = [
    formatTime(run.due_at),
    run.status === 'running' ? (retries ? `failed, retrying (try ${run.attempts + 1})` : 'running') : run.status,
    run.status !== 'running' && retries ? `after ${retries} ${retries === 1 ? 'retry' : 'retries'}` : '',
    run.missed ? 'missed while the app was closed, run when it opened' : '',
  ].filter(Boolean);
  return `${parts.join(' · ')}${run.error && run.status !== 'succeeded' ? `: ${run.error}` : ''}`;
}

function scheduleText(task: TaskInfo): string {
  if (task.kind === 'once') return `Once, ${formatTime(task.at!)}`;
  if (task.kind === 'backlog') return 'Backlog: when the stack is idle';
  return `Cron ${task.cron} (${task.timezone})`;
}

function formatTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** `datetime-local` wants local time without an offset. */
function localInput(ms: number): string {
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return date.toISOString().slice(0, 16);
}

function TaskEditor({ task, onSave, onCancel }: { task: TaskInfo; onSave(change: { title: string; prompt: string; schedule: TaskScheduleInput }): Promise<void>; onCancel(): void }) {
  const [title, setTitle] = useState(task.title);
  const [prompt, setPrompt] = useState(task.prompt);
  const [kind, setKind] = useState(task.kind);
  const [at, setAt] = useState(task.at !== null ? localInput(task.at) : localInput(Date.now() + 3_600_000));
  const [cron, setCron] = useState(task.cron ?? '0 9 * * 1');
  const [timezone, setTimezone] = useState(task.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
  const schedule = (): TaskScheduleInput => (kind === 'once' ? { kind, at: new Date(at).getTime() } : kind === 'cron' ? { kind, cron, timezone } : { kind });
  return (
    <form
      class="task-editor"
      aria-label={`Edit ${task.title}`}
      onSubmit={(event) => {
        event.preventDefault();
        void onSave({ title, prompt, schedule: schedule() });
      }}
    >
      <label>
        Title
        <input value={title} onInput={(event) => setTitle(event.currentTarget.value)} required maxLength={120} />
      </label>
      <label>
        What to do
        <textarea value={prompt} onInput={(event) => setPrompt(event.currentTarget.value)} required rows={3} />
      </label>
      <label>
        When
        <select value={kind} onChange={(event) => setKind(event.currentTarget.value as TaskInfo['kind'])}>
          <option value="once">Once</option>
          <option value="cron">Repeating (cron)</option>
          <option value="backlog">Backlog (when idle)</option>
        </select>
      </label>
      {kind === 'once' && (
        <label>
          At
          <input type="datetime-local" value={at} onInput={(event) => setAt(event.currentTarget.value)} required />
        </label>
      )}
      {kind === 'cron' && (
        <>
          <label>
            Cron expression
            <input value={cron} onInput={(event) => setCron(event.currentTarget.value)} required spellcheck={false} />
          </label>
          <label>
            Time zone
            <input value={timezone} onInput={(event) => setTimezone(event.currentTarget.value)} required spellcheck={false} />
          </label>
        </>
      )}
      <div class="task-actions">
        <button type="submit" class="window-tool">
          Save task
        </button>
        <button type="button" class="window-tool" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function notificationPermission(): NotificationPermission | 'unsupported' {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}
