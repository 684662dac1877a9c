// schedule_task: the agent puts work on the stack's schedule for later — once at a time, on a cron
// schedule in the user's time zone, or in the backlog (done when the stack is idle). Each run is a
// mission of its own; the user sees, pauses, edits and deletes tasks in the Tasks window.
import { z } from 'zod';
import { describeSchedule, localTimeZone, type Scheduler } from '../tasks.ts';
import { defineTool } from './define-tool.ts';

export const scheduleTaskSchema = z.object({
  title: z.string().min(1).max(120).describe('A short name the user recognises, e.g. "Reconcile the week\'s invoices".'),
  prompt: z.string().min(1).max(20_000).describe('What to do at each run, written for yourself: it is all the run is given (with memory and the stack\'s files).'),
  when: z
    .enum(['once', 'cron', 'backlog'])
    .describe('once: at one time (give `at`); cron: repeatedly (give `cron`); backlog: when the stack is next idle.'),
  at: z.string().optional().describe('For once: the local date and time (2026-12-01T09:00) or one with an offset or Z.'),
  cron: z
    .string()
    .optional()
    .describe('For cron: five fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1" for Mondays at 09:00; a sixth leading field gives seconds.'),
  timezone: z.string().optional().describe('For cron: an IANA time zone; the user\'s own when left out.'),
});

export function createScheduleTaskTool(tasks: Pick<Scheduler, 'create'>) {
  return defineTool({
    name: 'schedule_task',
    description: `Schedule work for later in this stack: a reminder, a recurring check, a job to do when idle. The user's time zone is ${localTimeZone()}. Runs happen while the app is open; one due while it was closed runs once when it opens. A failed run is tried again twice.`,
    schema: scheduleTaskSchema,
    title: (input) => `Scheduling "${input.title}" (${input.when === 'once' ? `once, at ${input.at ?? '?'}` : input.when === 'cron' ? `cron ${input.cron ?? '?'}` : 'backlog'})`,
    async run(input) {
      const schedule =
        input.when === 'once'
          ? { kind: 'once' as const, at: input.at ?? '' }
          : input.when === 'cron'
            ? { kind: 'cron' as const, cron: input.cron ?? '', ...(input.timezone ? { timezone: input.timezone } : {}) }
            : { kind: 'backlog' as const };
      const task = await tasks.create({ title: input.title, prompt: input.prompt, schedule, createdBy: 'agent' });
      const next = task.next_run_at === null ? 'when the stack is next idle' : `next at ${new Date(task.next_run_at).toISOString()}`;
      return `Scheduled "${task.title}" (${task.id}): ${describeSchedule({ kind: task.kind, at: task.at, cron: task.cron, timezone: task.timezone })}, ${next}. The user sees it in the Tasks window.`;
    },
  });
}
