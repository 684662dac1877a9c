// Scheduled tasks: the agent (or the user) asks for work at a time — once, on a cron schedule in
// the user's time zone, or "backlog" (when the stack has been idle a while). The stack worker owns
// the timers while the app is open (one owner tab per stack). Each run is a mission marked
// "scheduled". A run that fails is tried again with backoff, three tries in all, then shows as
// failed with its error. Due times that passed while the app was closed run once when it opens
// (the stated policy: run once now, then keep the schedule), marked as missed.
import { Cron } from 'croner';
import type { TaskRecord, TaskRunRecord, TasksStore } from '../memory/index.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionStatus, MissionTask } from '../protocol/missions.ts';
import type { TaskInfo, TaskRunInfo, TaskScheduleInput } from '../protocol/tasks.ts';
import { BadRequestError } from './request-error.ts';

/** The waits before the second and third tries of a failed run. */
export const RETRY_DELAYS_MS = [10_000, 30_000];
/** A backlog task runs once nothing has run for this long. */
export const BACKLOG_IDLE_MS = 60_000;
/** The timer wakes at least this often, so a changed clock or a sleeping laptop is caught up. */
const MAX_TIMER_MS = 30_000;
const MAX_TITLE = 120;
const MAX_PROMPT = 20_000;

export class TaskError extends BadRequestError {}

type Schedule = Pick<TaskRecord, 'kind' | 'at' | 'cron' | 'timezone'>;

/** The user's time zone, as this browser knows it. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** A schedule as given (by the tool or the Tasks window), checked; throws TaskError saying what is wrong. */
export function checkSchedule(input: TaskScheduleInput, now: number): Schedule {
  switch (input?.kind) {
    case 'once': {
      const at = typeof input.at === 'number' ? input.at : Date.parse(String(input.at ?? ''));
      if (!Number.isFinite(at)) throw new TaskError(`"${String(input.at)}" is not a date and time; give one like 2026-12-01T09:00 (local time) or with its offset.`);
      if (at < now - 60_000) throw new TaskError(`${new Date(at).toISOString()} has passed; a one-off task needs a time to come.`);
      return { kind: 'once', at, cron: null, timezone: null };
    }
    case 'cron': {
      const timezone = input.timezone?.trim() || localTimeZone();
      const cron = String(input.cron ?? '').trim();
      let next: Date | null;
      try {
        next = new Cron(cron, { timezone, paused: true }).nextRun(new Date(now));
      } catch (error) {
        throw new TaskError(`"${cron}" in ${timezone} is not a schedule this can run: ${(error as Error).message}`);
      }
      if (!next) throw new TaskError(`"${cron}" never comes again.`);
      return { kind: 'cron', at: null, cron, timezone };
    }
    case 'backlog':
      return { kind: 'backlog', at: null, cron: null, timezone: null };
    default:
      throw new TaskError('A schedule is once (with a time), cron (with an expression and a time zone) or backlog.');
  }
}

/** When a task with this schedule runs next after `after`; null when never (backlog runs when idle). */
export function nextRunOf(schedule: Schedule, after: number): number | null {
  if (schedule.kind === 'once') return schedule.at;
  if (schedule.kind === 'backlog') return null;
  return new Cron(schedule.cron!, { timezone: schedule.timezone!, paused: true }).nextRun(new Date(after))?.getTime() ?? null;
}

/** How the tool and the window say a schedule. */
export function describeSchedule(task: Schedule): string {
  if (task.kind === 'once') return `once, at ${new Date(task.at!).toISOString()}`;
  if (task.kind === 'backlog') return 'backlog (when the stack is idle)';
  return `cron "${task.cron}" in ${task.timezone}`;
}

export interface RunInfo {
  task: MissionTask;
  dueAt: number;
}

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
  const now = deps.now ?? Date.now;
  const delays = deps.retryDelays ?? RETRY_DELAYS_MS;
  const { store } = deps;
  /** Tasks with a run going on (between its tries too): a due time then is skipped, not piled up. */
  const inFlight = new Map<string, Promise<void>>();
  const waits = new Map<string, () => void>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let ticking: Promise<void> = Promise.resolve();

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

  function arm(): void {
    clearTimeout(timer);
    timer = undefined;
    if (stopped) return;
    void store
      .list()
      .then((tasks) => {
        if (stopped) return;
        const active = tasks.filter((task) => task.status === 'active' && !inFlight.has(task.id));
        const soonest = Math.min(...active.filter((task) => task.nextRunAt !== null).map((task) => task.nextRunAt!));
        let wait = Number.isFinite(soonest) ? soonest - now() : MAX_TIMER_MS;
        if (active.some((task) => task.kind === 'backlog')) wait = Math.min(wait, Math.max(1_000, deps.idleSince() + BACKLOG_IDLE_MS - now()));
        clearTimeout(timer);
        timer = setTimeout(() => void tick(), Math.max(0, Math.min(wait, MAX_TIMER_MS)));
      })
      .catch(() => {
        timer = setTimeout(() => void tick(), MAX_TIMER_MS);
      });
  }

  function tick(): Promise<void> {
    ticking = ticking.then(async () => {
      if (stopped) return;
      const at = now();
      const tasks = await store.list();
      for (const task of tasks) {
        if (task.status !== 'active' || task.kind === 'backlog' || task.nextRunAt === null || task.nextRunAt > at) continue;
        // The schedule moves on at the due time, whether or not this occurrence runs.
        const next = task.kind === 'cron' ? nextRunOf(task, Math.max(at, task.nextRunAt)) : null;
        await store.update(task.id, { nextRunAt: next });
        if (inFlight.has(task.id)) continue;
        execute({ ...task, nextRunAt: next }, task.nextRunAt, false);
      }
      const backlog = tasks.find((task) => task.status === 'active' && task.kind === 'backlog' && !inFlight.has(task.id));
      if (backlog && !deps.busy() && ![...inFlight.keys()].length && at - deps.idleSince() >= BACKLOG_IDLE_MS) execute(backlog, at, false);
    }).catch(() => {}).finally(arm);
    return ticking;
  }

  function sleep(id: string, ms: number): Promise<void> {
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

  function execute(task: TaskRecord, dueAt: number, missed: boolean): void {
    const work = (async () => {
      let run = await store.startRun(task.id, dueAt, missed);
      await changed(task.id);
      const tries = delays.length + 1;
      let ended: { status: 'succeeded' | 'failed' | 'stopped'; error: string | null } = { status: 'stopped', error: null };
      for (let attempt = 1; attempt <= tries; attempt++) {
        const current = await store.get(task.id);
        if (!current || stopped) {
          ended = { status: 'stopped', error: current ? 'The stack was closed before this ran.' : 'The task was deleted.' };
          break;
        }
        const { missionId, finished } = deps.run(current, { dueAt, task: { id: current.id, title: current.title, attempt, of: tries, missed } });
        run = (await store.addAttempt(run.id, missionId)) ?? run;
        await changed(task.id);
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
        await changed(task.id);
        await sleep(task.id, delays[attempt - 1]!);
      }
      await store.finishRun(run.id, ended.status, ended.error);
      const after = await store.get(task.id);
      // A one-off, or a backlog item, is done once it ran; one that failed says so.
      if (after && after.kind !== 'cron' && after.status === 'active') await store.update(task.id, { status: ended.status === 'succeeded' ? 'done' : 'failed' });
    })()
      .catch(() => {})
      .finally(() => {
        inFlight.delete(task.id);
        void changed(task.id).finally(arm);
      });
    inFlight.set(task.id, work);
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
        execute({ ...task, nextRunAt: next }, task.nextRunAt, true);
      }
      arm();
    },

    stop() {
      stopped = true;
      clearTimeout(timer);
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
      execute(task, now(), false);
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
