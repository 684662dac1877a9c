// Scheduled tasks: the agent (or the user) asks for work at a time — once, on a cron schedule in
// the user's time zone, or "backlog" (when the stack has been idle a while; task-schedule.ts). The
// stack worker owns the timers while the app is open (one owner tab per stack; task-timer.ts).
// Each run is a mission marked "scheduled". A run that fails is tried again with backoff, three
// tries in all, then shows as failed with its error (task-runs.ts). Due times that passed while
// the app was closed run once when it opens (the stated policy: run once now, then keep the
// schedule), marked as missed.
import type { TaskRecord, TaskRunRecord, TasksStore } from '../memory/index.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionStatus } from '../protocol/missions.ts';
import type { TaskInfo, TaskRunInfo, TaskScheduleInput } from '../protocol/tasks.ts';
import { runTask, type RunInfo, type SchedulerContext } from './task-runs.ts';
import { checkSchedule, describeSchedule, nextRunOf, TaskError } from './task-schedule.ts';
import { createTaskTimer } from './task-timer.ts';

export { BACKLOG_IDLE_MS, checkSchedule, describeSchedule, localTimeZone, nextRunOf, TaskError } from './task-schedule.ts';
export type { RunInfo } from './task-runs.ts';

/** The waits before the second and third tries of a failed run. */
export const RETRY_DELAYS_MS = [10_000, 30_000];
const MAX_TITLE = 120;
const MAX_PROMPT = 20_000;

export interface SchedulerDeps {
  store: TasksStore;
  emit(event: StackEventBody): void;
  newId(prefix: string): string;
  /** Starts a run's try as a mission; `finished` settles when that mission ends. */
  run(task: TaskRecord, info: RunInfo): { missionId: string; finished: Promise<{ status: MissionStatus; error?: ErrorShape }> };
  /** A mission runs or waits (backlog tasks wait for an idle stack). */
  busy(): boolean;
  /** When the last mission ended (or the stack opened). */
  idleSince(): number;
  now?(): number;
  retryDelays?: number[];
}

export interface TaskInput {
  title: string;
  prompt: string;
  schedule: TaskScheduleInput;
  createdBy: 'agent' | 'user';
}

export interface TaskChange {
  title?: string;
  prompt?: string;
  schedule?: TaskScheduleInput;
  paused?: boolean;
}

export interface Scheduler {
  /** Closes runs a closed page left open, runs what was missed while closed, and arms the timer. */
  start(): Promise<void>;
  stop(): void;
  create(input: TaskInput): Promise<TaskInfo>;
  update(id: string, change: TaskChange): Promise<TaskInfo>;
  remove(id: string): Promise<void>;
  /** Runs the task now, outside its schedule (which stays as it was). */
  runNow(id: string): Promise<TaskInfo>;
  list(): Promise<TaskInfo[]>;
  /** Resolves when every run started so far has ended (tests). */
  idle(): Promise<void>;
}

export function createScheduler(deps: SchedulerDeps): Scheduler {
  const { store } = deps;
  const now = deps.now ?? Date.now;
  const ctx: SchedulerContext = {
    store,
    now,
    delays: deps.retryDelays ?? RETRY_DELAYS_MS,
    run: (task, info) => deps.run(task, info),
    busy: () => deps.busy(),
    idleSince: () => deps.idleSince(),
    inFlight: new Map(),
    waits: new Map(),
    stopped: false,
    changed,
    arm: () => timer.arm(),
  };
  const { inFlight, waits } = ctx;
  const timer = createTaskTimer(ctx);
  const arm = timer.arm;

  async function info(task: TaskRecord): Promise<TaskInfo> {
    return toInfo(task, await store.runs(task.id, 10), inFlight.has(task.id));
  }

  async function changed(id: string): Promise<void> {
    const task = await store.get(id);
    if (task) deps.emit({ type: 'task_changed', task: await info(task) });
  }

  async function require(id: string): Promise<TaskRecord> {
    const task = typeof id === 'string' ? await store.get(id) : undefined;
    if (!task) throw new TaskError(`There is no task ${String(id)}.`);
    return task;
  }

  return {
    async start() {
      await store.closeInterruptedRuns();
      const at = now();
      for (const task of await store.list()) {
        if (task.status !== 'active' || task.nextRunAt === null || task.nextRunAt > at) continue;
        // Missed while the app was closed: once now, then the schedule as before.
        const next = task.kind === 'cron' ? nextRunOf(task, at) : null;
        await store.update(task.id, { nextRunAt: next });
        runTask(ctx, { ...task, nextRunAt: next }, task.nextRunAt, true);
      }
      arm();
    },

    stop() {
      ctx.stopped = true;
      timer.stop();
      for (const wake of waits.values()) wake();
    },

    async create(input) {
      const { title, prompt } = checkText(input.title, input.prompt);
      const schedule = checkSchedule(input.schedule, now());
      const task = await store.add({ id: deps.newId('task'), title, prompt, ...schedule, nextRunAt: nextRunOf(schedule, now()), createdBy: input.createdBy });
      await changed(task.id);
      arm();
      return info(task);
    },

    async update(id, change) {
      const task = await require(id);
      const text = checkText(change.title ?? task.title, change.prompt ?? task.prompt);
      const schedule = change.schedule ? checkSchedule(change.schedule, now()) : task;
      const status = change.paused === undefined ? task.status : change.paused ? 'paused' : 'active';
      // Resumed, or given a new schedule: the next run counts from now (a one-off whose time passed runs now).
      const nextRunAt = status !== 'active' ? task.nextRunAt : schedule.kind === 'once' ? Math.max(schedule.at!, now()) : nextRunOf(schedule, now());
      await store.update(id, { ...text, kind: schedule.kind, at: schedule.at, cron: schedule.cron, timezone: schedule.timezone, status, nextRunAt });
      await changed(id);
      arm();
      return info((await store.get(id))!);
    },

    async remove(id) {
      await require(id);
      await store.remove(id);
      waits.get(id)?.();
      deps.emit({ type: 'task_removed', task_id: id });
      arm();
    },

    async runNow(id) {
      const task = await require(id);
      if (inFlight.has(id)) throw new TaskError(`"${task.title}" is running now.`);
      runTask(ctx, task, now(), false);
      return info(task);
    },

    async list() {
      return Promise.all((await store.list()).map(info));
    },

    async idle() {
      while (inFlight.size) await Promise.all([...inFlight.values()]);
    },
  };
}

function checkText(title: unknown, prompt: unknown): { title: string; prompt: string } {
  const t = typeof title === 'string' ? title.trim() : '';
  const p = typeof prompt === 'string' ? prompt.trim() : '';
  if (!t) throw new TaskError('A task needs a title.');
  if (!p) throw new TaskError('A task needs a prompt: what the agent should do when it runs.');
  if (t.length > MAX_TITLE) throw new TaskError(`A task's title is at most ${MAX_TITLE} characters.`);
  if (p.length > MAX_PROMPT) throw new TaskError(`A task's prompt is at most ${MAX_PROMPT.toLocaleString('en')} characters.`);
  return { title: t, prompt: p };
}

function toRunInfo(run: TaskRunRecord): TaskRunInfo {
  return {
    id: run.id,
    due_at: run.dueAt,
    missed: run.missed,
    status: run.status,
    attempts: run.attempts,
    mission_ids: run.missionIds,
    error: run.error,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
  };
}

export function toInfo(task: TaskRecord, runs: TaskRunRecord[], running: boolean): TaskInfo {
  return {
    id: task.id,
    title: task.title,
    prompt: task.prompt,
    kind: task.kind,
    at: task.at,
    cron: task.cron,
    timezone: task.timezone,
    schedule: describeSchedule(task),
    status: task.status,
    next_run_at: task.nextRunAt,
    created_by: task.createdBy,
    created_at: task.createdAt,
    running,
    runs: runs.map(toRunInfo),
  };
}

/** The mission's message for one try of a run: what the task asks, and that nobody typed it now. */
export function scheduledPrompt(task: TaskRecord, info: RunInfo): string {
  const when = new Date(info.dueAt).toISOString();
  const notes = [
    `This is the scheduled task "${task.title}" (${describeSchedule(task)}), not a message the user typed now.`,
    info.task.missed ? `It was due at ${when} while the app was closed, and runs now that it opened.` : `It was due at ${when}.`,
    info.task.attempt > 1 ? `This is try ${info.task.attempt} of ${info.task.of}: the earlier one failed.` : '',
    'Do what it asks; the user reads the result later.',
  ].filter(Boolean);
  return `${notes.join(' ')}\n\n${task.prompt}`;
}
