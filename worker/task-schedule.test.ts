import { describe, expect, it } from 'vitest';
import { checkSchedule, nextRunOf } from './task-schedule.ts';

describe('schedules', () => {
  const now = Date.parse('2026-11-26T10:00:00Z');

  it('reads cron in the given time zone, and a one-off time', () => {
    const monday9 = checkSchedule({ kind: 'cron', cron: '0 9 * * 1', timezone: 'Europe/Berlin' }, now);
    expect(new Date(nextRunOf(monday9, now)!).toISOString()).toBe('2026-11-30T08:00:00.000Z');
    const once = checkSchedule({ kind: 'once', at: '2026-12-01T09:00:00Z' }, now);
    expect(nextRunOf(once, now)).toBe(Date.parse('2026-12-01T09:00:00Z'));
    expect(nextRunOf(checkSchedule({ kind: 'backlog' }, now), now)).toBeNull();
  });

  it('refuses what cannot run, saying why', () => {
    expect(() => checkSchedule({ kind: 'cron', cron: 'every monday' }, now)).toThrow(/"every monday" in .* is not a schedule this can run/);
    expect(() => checkSchedule({ kind: 'cron', cron: '0 9 * * 1', timezone: 'Mars/Olympus' }, now)).toThrow(/Mars\/Olympus/);
    expect(() => checkSchedule({ kind: 'once', at: 'tomorrow-ish' }, now)).toThrow('"tomorrow-ish" is not a date and time');
    expect(() => checkSchedule({ kind: 'once', at: '2026-11-01T09:00:00Z' }, now)).toThrow('has passed');
    expect(() => checkSchedule({ kind: 'weekly' } as never, now)).toThrow('A schedule is once');
  });
});
