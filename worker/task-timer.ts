// The scheduler's one timer: set for the soonest due task (and for a backlog task once the stack
// has been idle), woken at least every 30 s so a changed clock or a sleeping laptop is caught up;
// each tick starts what is due.
import { BACKLOG_IDLE_MS, nextRunOf } from './task-schedule.ts';
import { runTask, type SchedulerContext } from './task-runs.ts';

/** The timer wakes at least this often, so a changed clock or a sleeping laptop is caught up. */
const MAX_TIMER_MS = 30_000;

export interface TaskTimer {
  /** Sets the timer for the next due task (nothing once the scheduler stopped). */
  arm(): void;
  /** Clears it. */
  stop(): void;
}

export function createTaskTimer(ctx: SchedulerContext): TaskTimer {
  const { store, now, inFlight } = ctx;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ticking: Promise<void> = Promise.resolve();

  function arm(): void {
    clearTimeout(timer);
    timer = undefined;
    if (ctx.stopped) return;
    void store
      .list()
      .then((tasks) => {
        if (ctx.stopped) return;
        const active = tasks.filter((task) => task.status === 'active' && !inFlight.has(task.id));
        const soonest = Math.min(...active.filter((task) => task.nextRunAt !== null).map((task) => task.nextRunAt!));
        let wait = Number.isFinite(soonest) ? soonest - now() : MAX_TIMER_MS;
        if (active.some((task) => task.kind === 'backlog')) wait = Math.min(wait, Math.max(1_000, ctx.idleSince() + BACKLOG_IDLE_MS - now()));
        clearTimeout(timer);
        timer = setTimeout(() => void tick(), Math.max(0, Math.min(wait, MAX_TIMER_MS)));
      })
      .catch(() => {
        timer = setTimeout(() => void tick(), MAX_TIMER_MS);
      });
  }

  function tick(): Promise<void> {
    ticking = ticking.then(async () => {
      if (ctx.stopped) return;
      const at = now();
      const tasks = await store.list();
      for (const task of tasks) {
        if (task.status !== 'active' || task.kind === 'backlog' || task.nextRunAt === null || task.nextRunAt > at) continue;
        // The schedule moves on at the due time, whether or not this occurrence runs.
        const next = task.kind === 'cron' ? nextRunOf(task, Math.max(at, task.nextRunAt)) : null;
        await store.update(task.id, { nextRunAt: next });
        if (inFlight.has(task.id)) continue;
        runTask(ctx, { ...task, nextRunAt: next }, task.nextRunAt, false);
      }
      const backlog = tasks.find((task) => task.status === 'active' && task.kind === 'backlog' && !inFlight.has(task.id));
      if (backlog && !ctx.busy() && ![...inFlight.keys()].length && at - ctx.idleSince() >= BACKLOG_IDLE_MS) runTask(ctx, backlog, at, false);
    }).catch(() => {}).finally(arm);
    return ticking;
  }

  return {
    arm,
    stop: () => clearTimeout(timer),
  };
}
