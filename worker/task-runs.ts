// One run of a scheduled task: a mission per try, a failed try tried again after a wait (three
// tries in all), the run's record kept as it goes, and a one-off or backlog task done after it.
import type { TaskRecord, TasksStore } from '../memory/index.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import type { MissionStatus, MissionTask } from '../protocol/missions.ts';

export interface RunInfo {
  task: MissionTask;
  dueAt: number;
}

/** What the scheduler's runs and its timer share. */
export interface SchedulerContext {
  store: TasksStore;
  now(): number;
  /** The waits before the second and third tries of a failed run. */
  delays: number[];
  /** Starts a run's try as a mission; `finished` settles when that mission ends. */
  run(task: TaskRecord, info: RunInfo): { missionId: string; finished: Promise<{ status: MissionStatus; error?: ErrorShape }> };
  /** A mission runs or waits (backlog tasks wait for an idle stack). */
  busy(): boolean;
  /** When the last mission ended (or the stack opened). */
  idleSince(): number;
  /** Tasks with a run going on (between its tries too): a due time then is skipped, not piled up. */
  inFlight: Map<string, Promise<void>>;
  /** A run waiting before its next try, by task: called, it tries at once (or stops). */
  waits: Map<string, () => void>;
  /** The scheduler was stopped (the stack closes): nothing more runs. */
  stopped: boolean;
  /** Tells the page the task changed. */
  changed(id: string): Promise<void>;
  /** Sets the timer for the next due task. */
  arm(): void;
}

/** Starts a run of `task` due at `dueAt` (`missed`: while the app was closed). Never throws. */
export function runTask(ctx: SchedulerContext, task: TaskRecord, dueAt: number, missed: boolean): void {
  const { store, inFlight } = ctx;
  const work = (async () => {
    let run = await store.startRun(task.id, dueAt, missed);
    await ctx.changed(task.id);
    const tries = ctx.delays.length + 1;
    let ended: { status: 'succeeded' | 'failed' | 'stopped'; error: string | null } = { status: 'stopped', error: null };
    for (let attempt = 1; attempt <= tries; attempt++) {
      const current = await store.get(task.id);
      if (!current || ctx.stopped) {
        ended = { status: 'stopped', error: current ? 'The stack was closed before this ran.' : 'The task was deleted.' };
        break;
      }
      const { missionId, finished } = ctx.run(current, { dueAt, task: { id: current.id, title: current.title, attempt, of: tries, missed } });
      run = (await store.addAttempt(run.id, missionId)) ?? run;
      await ctx.changed(task.id);
      const outcome = await finished;
      if (outcome.status === 'completed') {
        ended = { status: 'succeeded', error: null };
        break;
      }
      const error = outcome.error?.message ?? (outcome.status === 'aborted' ? 'Stopped.' : 'It did not finish.');
      // Stopped by the user, or by a closing page: not tried again.
      if (outcome.status !== 'failed' || attempt === tries) {
        ended = { status: outcome.status === 'failed' ? 'failed' : 'stopped', error };
        break;
      }
      ended = { status: 'failed', error };
      await ctx.changed(task.id);
      await sleep(ctx.waits, task.id, ctx.delays[attempt - 1]!);
    }
    await store.finishRun(run.id, ended.status, ended.error);
    const after = await store.get(task.id);
    // A one-off, or a backlog item, is done once it ran; one that failed says so.
    if (after && after.kind !== 'cron' && after.status === 'active') await store.update(task.id, { status: ended.status === 'succeeded' ? 'done' : 'failed' });
  })()
    .catch(() => {})
    .finally(() => {
      inFlight.delete(task.id);
      void ctx.changed(task.id).finally(ctx.arm);
    });
  inFlight.set(task.id, work);
}

/** Waits `ms` before a task's next try, or until its wait in `waits` is called. */
function sleep(waits: Map<string, () => void>, id: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(handle);
      waits.delete(id);
      resolve();
    };
    const handle = setTimeout(wake, ms);
    waits.set(id, wake);
  });
}
