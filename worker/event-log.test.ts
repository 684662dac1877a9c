import { describe, expect, it } from 'vitest';
import type { StackEvent } from '../protocol/events.ts';
import { openEventLog, type EventStore } from './event-log.ts';

/** A store whose writes finish only when the test says so. */
function slowStore() {
  const stored: StackEvent[] = [];
  const waiting: (() => void)[] = [];
  let failNext = false;
  const store: EventStore = {
    appendEvents: (events) =>
      new Promise<void>((resolve, reject) =>
        waiting.push(() => {
          if (failNext) return reject(new Error('disk full'));
          stored.push(...events);
          resolve();
        }),
      ),
    eventsSince: async (after) => stored.filter((event) => event.seq > after),
    lastEventSeq: async () => stored.at(-1)?.seq ?? 0,
  };
  return { store, stored, finish: () => waiting.shift()?.(), fail: () => (failNext = true) };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('event log', () => {
  it('delivers a batch only after it is stored, in order', async () => {
    const { store, stored, finish } = slowStore();
    const log = await openEventLog({ store });
    const seen: number[] = [];
    log.subscribe((batch) => seen.push(...batch.map((event) => event.seq)));
    log.append({ type: 'model_status', status: { state: 'unknown' } });
    await tick();
    log.append({ type: 'model_status', status: { state: 'unknown' } });
    await tick();
    expect(seen).toEqual([]); // nothing shown that a killed tab could lose
    finish();
    await tick();
    expect(stored.map((event) => event.seq)).toEqual([1]);
    expect(seen).toEqual([1]);
    finish();
    await log.flushed();
    expect(seen).toEqual([1, 2]);
  });

  it('still delivers when storing fails, and says so', async () => {
    const { store, finish, fail } = slowStore();
    const errors: unknown[] = [];
    const log = await openEventLog({ store, onStoreError: (error) => errors.push(error) });
    const seen: number[] = [];
    log.subscribe((batch) => seen.push(...batch.map((event) => event.seq)));
    fail();
    log.append({ type: 'model_status', status: { state: 'unknown' } });
    await tick();
    finish();
    await log.flushed();
    expect(seen).toEqual([1]);
    expect(String(errors[0])).toContain('disk full');
  });
});
