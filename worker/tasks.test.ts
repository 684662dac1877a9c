import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openTestMemory, type TestMemory } from '../memory/test-helpers.ts';
import { TasksStore } from '../memory/index.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionStatus } from '../protocol/missions.ts';
import { createScheduler, scheduledPrompt, type RunInfo, type Scheduler } from './tasks.ts';

type Outcome = { status: MissionStatus; error?: ErrorShape };

describe('the scheduler', () => {
  let memory: TestMemory;
  let store: TasksStore;
  let events: StackEventBody[];
  let runs: { task: string; info: RunInfo; finish(outcome: Outcome): void }[];
  /** How each new try ends, in order; `completed` once these run out. */
  let script: Outcome[];
  let scheduler: Scheduler;
  let ids = 0;

  const make = () =>
    createScheduler({
      store,
      emit: (event) => events.push(event),
      newId: (prefix) => `${prefix}_${++ids}`,
      run: (task, info) => {
        let finish: (outcome: Outcome) => void = () => {};
        const finished = new Promise<Outcome>((resolve) => (finish = resolve));
        runs.push({ task: task.id, info, finish });
        const scripted = script.shift() ?? { status: 'completed' };
        queueMicrotask(() => finish(scripted));
        return { missionId: `m_${runs.length}`, finished };
      },
      busy: () => false,
      idleSince: () => 0,
    });

  /** Moves the clock, letting timers and the database's promises run. */
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= 1_000) {
      await vi.advanceTimersByTimeAsync(Math.min(1_000, left));
    }
  };

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(Date.parse('2026-11-26T10:00:30Z'));
    memory = await openTestMemory();
    store = new TasksStore(memory.tasks.db, () => Date.now());
    events = [];
    runs = [];
    script = [];
    scheduler = make();
    await scheduler.start();
  });

  afterEach(async () => {
    scheduler.stop();
    vi.useRealTimers();
    await memory.close();
  });

  it('runs an every-minute task three times in three minutes, each a mission of its own', async () => {
    const task = await scheduler.create({ title: 'Check the inbox', prompt: 'Look for new invoices.', schedule: { kind: 'cron', cron: '* * * * *', timezone: 'UTC' }, createdBy: 'agent' });
    expect(new Date(task.next_run_at!).toISOString()).toBe('2026-11-26T10:01:00.000Z');
    await advance(3 * 60_000);
    await scheduler.idle();
    expect(runs.map((run) => new Date(run.info.dueAt).toISOString())).toEqual(['2026-11-26T10:01:00.000Z', '2026-11-26T10:02:00.000Z', '2026-11-26T10:03:00.000Z']);
    const [listed] = await scheduler.list();
    expect(listed!.runs.map((run) => [run.status, run.attempts, run.missed])).toEqual([
      ['succeeded', 1, false],
      ['succeeded', 1, false],
      ['succeeded', 1, false],
    ]);
    expect(listed!.status).toBe('active');
    expect(events.some((event) => event.type === 'task_changed')).toBe(true);
  });

  it('a run whose mission fails twice then succeeds is one success with two retries, waiting between tries', async () => {
    script = [
      { status: 'failed', error: { code: 'model_unreachable', message: 'The model did not answer.' } },
      { status: 'failed', error: { code: 'model_unreachable', message: 'The model did not answer.' } },
    ];
    const task = await scheduler.create({ title: 'Remind', prompt: 'Remind me to pay Acme.', schedule: { kind: 'once', at: Date.now() + 5_000 }, createdBy: 'agent' });
    await advance(6_000);
    expect(runs).toHaveLength(1);
    await advance(10_000);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.info.task).toMatchObject({ attempt: 2, of: 3 });
    await advance(40_000);
    await scheduler.idle();
    expect(runs).toHaveLength(3);
    const [listed] = await scheduler.list();
    expect(listed!.runs).toHaveLength(1);
    expect(listed!.runs[0]).toMatchObject({ status: 'succeeded', attempts: 3, mission_ids: ['m_1', 'm_2', 'm_3'], error: null });
    expect(listed!.status).toBe('done');
    expect(scheduledPrompt((await store.get(task.id))!, runs[2]!.info)).toContain('This is try 3 of 3');
  });

  it('after three failed tries the run shows as failed with its error', async () => {
    const failed: Outcome = { status: 'failed', error: { code: 'model_error', message: 'Overloaded.' } };
    script = [failed, failed, failed];
    await scheduler.create({ title: 'Report', prompt: 'Write the weekly report.', schedule: { kind: 'once', at: Date.now() + 1_000 }, createdBy: 'agent' });
    await advance(60_000);
    await scheduler.idle();
    const [listed] = await scheduler.list();
    expect(listed!.runs[0]).toMatchObject({ status: 'failed', attempts: 3, error: 'Overloaded.' });
    expect(listed!.status).toBe('failed');
  });

  it('a paused task does not fire, and runs again once resumed', async () => {
    const task = await scheduler.create({ title: 'Tick', prompt: 'Say tick.', schedule: { kind: 'cron', cron: '* * * * *', timezone: 'UTC' }, createdBy: 'user' });
    await scheduler.update(task.id, { paused: true });
    await advance(3 * 60_000);
    expect(runs).toHaveLength(0);
    await scheduler.update(task.id, { paused: false });
    await advance(60_000);
    await scheduler.idle();
    expect(runs).toHaveLength(1);
  });

  it('due while the app was closed: runs once when it opens, marked missed, then keeps its schedule', async () => {
    await scheduler.create({ title: 'Hourly', prompt: 'Check.', schedule: { kind: 'cron', cron: '0 * * * *', timezone: 'UTC' }, createdBy: 'agent' });
    await scheduler.create({ title: 'Once', prompt: 'Do it.', schedule: { kind: 'once', at: Date.now() + 60_000 }, createdBy: 'agent' });
    scheduler.stop();
    vi.setSystemTime(Date.parse('2026-11-26T13:20:00Z'));
    scheduler = make();
    await scheduler.start();
    await scheduler.idle();
    expect(runs.map((run) => [run.info.task.title, run.info.task.missed])).toEqual([
      ['Hourly', true],
      ['Once', true],
    ]);
    const [hourly, once] = await scheduler.list();
    expect(hourly!.runs).toHaveLength(1);
    expect(new Date(hourly!.next_run_at!).toISOString()).toBe('2026-11-26T14:00:00.000Z');
    expect(once!.status).toBe('done');
    expect(scheduledPrompt((await store.get(hourly!.id))!, runs[0]!.info)).toContain('while the app was closed');
  });

  it('a run a closed page left going is closed as stopped on the next open', async () => {
    const task = await scheduler.create({ title: 'Long', prompt: 'Work.', schedule: { kind: 'backlog' }, createdBy: 'agent' });
    await store.startRun(task.id, Date.now(), false);
    scheduler.stop();
    scheduler = make();
    await scheduler.start();
    const [listed] = await scheduler.list();
    expect(listed!.runs[0]).toMatchObject({ status: 'stopped', error: 'The page was closed while this ran.' });
  });

  it('runs a backlog task once the stack has been idle, then it is done', async () => {
    await scheduler.create({ title: 'Tidy', prompt: 'Tidy the artifacts folder.', schedule: { kind: 'backlog' }, createdBy: 'agent' });
    await advance(61_000);
    await scheduler.idle();
    expect(runs).toHaveLength(1);
    const [listed] = await scheduler.list();
    expect(listed!.status).toBe('done');
  });

  it('deleting a task removes it and its runs', async () => {
    const task = await scheduler.create({ title: 'Gone', prompt: 'x', schedule: { kind: 'backlog' }, createdBy: 'user' });
    await scheduler.remove(task.id);
    expect(await scheduler.list()).toEqual([]);
    expect(events.at(-1)).toEqual({ type: 'task_removed', task_id: task.id });
    await expect(scheduler.runNow(task.id)).rejects.toThrow(`There is no task ${task.id}.`);
  });
});
