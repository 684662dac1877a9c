// A scheduled task's schedule: once at a time, a cron expression in a time zone, or backlog (when
// the stack has been idle a while); checked as given, its next time, and how it is said.
import { Cron } from 'croner';
import type { TaskRecord } from '../memory/index.ts';
import type { TaskScheduleInput } from '../protocol/tasks.ts';
import { BadRequestError } from './request-error.ts';

/** A backlog task runs once nothing has run for this long. */
export const BACKLOG_IDLE_MS = 60_000;

/** What the user or the agent gave wrongly (a schedule, a title, a task that is not there), in words for them. */
export class TaskError extends BadRequestError {}

export type Schedule = Pick<TaskRecord, 'kind' | 'at' | 'cron' | 'timezone'>;

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
