import { afterEach, describe, expect, it } from 'vitest';
import { DbConstraintError } from './db-errors.ts';
import { openTestMemory, type TestMemory } from './test-helpers.ts';
import { isTruncated, OBSERVATION_LIMITS } from './truncate.ts';

let opened: TestMemory | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function setup() {
  opened = await openTestMemory();
  return opened;
}

describe('transcript.db', () => {
  it('records sessions and one observation per turn with a per-session sequence', async () => {
    const m = await setup();
    const session = await m.transcript.startSession('s1');
    expect(session).toMatchObject({ id: 's1', endedAt: null, messageCount: 0, observationCount: 0 });
    const first = await m.transcript.appendObservation({
      sessionId: 's1',
      userMessage: 'hello',
      toolCalls: [{ name: 'bash', ok: true, summary: 'bash({"cmd":"ls"}) -> a.pdf' }],
      agentResponse: 'hi',
    });
    const second = await m.transcript.appendObservation({ sessionId: 's1', userMessage: '', toolCalls: [], agentResponse: 'more' });
    expect(first).toMatchObject({ sessionId: 's1', sequenceNum: 1, userMessage: 'hello', agentResponse: 'hi', processed: false });
    expect(first.toolCalls).toEqual([{ name: 'bash', ok: true, summary: 'bash({"cmd":"ls"}) -> a.pdf' }]);
    expect(second.sequenceNum).toBe(2);
    await m.transcript.endSession('s1');
    expect(await m.transcript.getSession('s1')).toMatchObject({ messageCount: 1, observationCount: 2, endedAt: expect.any(Number) });
  });

  it('is append-only: content cannot change, rows cannot be deleted, processed only goes 0 -> 1', async () => {
    const m = await setup();
    await m.transcript.startSession('s1');
    const obs = await m.transcript.appendObservation({ sessionId: 's1', userMessage: 'x', toolCalls: [], agentResponse: 'y' });
    const db = m.transcript.db;
    await expect(db.run("UPDATE observations SET user_message = 'edited' WHERE id = ?", [obs.id])).rejects.toThrow(/append-only/);
    await expect(db.run('DELETE FROM observations WHERE id = ?', [obs.id])).rejects.toThrow(/append-only/);
    await expect(db.run("DELETE FROM sessions WHERE id = 's1'")).rejects.toThrow(/append-only/);
    expect(await m.transcript.markProcessed([obs.id])).toBe(1);
    expect(await m.transcript.markProcessed([obs.id])).toBe(0);
    await expect(db.run('UPDATE observations SET processed = 0 WHERE id = ?', [obs.id])).rejects.toThrow(/append-only/);
    expect((await m.transcript.getObservation(obs.id))!.processed).toBe(true);
  });

  it('enforces foreign keys: an observation needs a recorded session', async () => {
    const m = await setup();
    await expect(
      m.transcript.appendObservation({ sessionId: 'nobody', userMessage: 'x', toolCalls: [], agentResponse: '' }),
    ).rejects.toBeInstanceOf(DbConstraintError);
  });

  it('lists unprocessed observations oldest first', async () => {
    const m = await setup();
    await m.transcript.startSession('s1');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await m.transcript.appendObservation({ sessionId: 's1', userMessage: `m${i}`, toolCalls: [], agentResponse: '' })).id);
    }
    await m.transcript.markProcessed([ids[1]!, ids[3]!]);
    expect((await m.transcript.unprocessed()).map((o) => o.userMessage)).toEqual(['m0', 'm2', 'm4']);
    expect((await m.transcript.unprocessed(2)).map((o) => o.userMessage)).toEqual(['m0', 'm2']);
    expect(await m.transcript.countUnprocessed()).toBe(3);
  });

  it('keeps a 1 MB observation, truncated with a marker', async () => {
    const m = await setup();
    await m.transcript.startSession('s1');
    const huge = 'x'.repeat(1024 * 1024);
    const obs = await m.transcript.appendObservation({
      sessionId: 's1',
      userMessage: huge,
      toolCalls: [{ name: 'read', ok: true, summary: huge }],
      agentResponse: huge,
    });
    const stored = (await m.transcript.getObservation(obs.id))!;
    expect(stored.userMessage.length).toBeLessThanOrEqual(OBSERVATION_LIMITS.userMessage);
    expect(stored.userMessage.startsWith('xxxx')).toBe(true);
    expect(stored.userMessage).toMatch(/\[\.\.\. truncated: 1,048,576 characters in all\]$/);
    expect(isTruncated(stored.agentResponse)).toBe(true);
    expect(stored.toolCalls[0]!.summary.length).toBeLessThanOrEqual(OBSERVATION_LIMITS.toolSummary);
    expect(isTruncated(stored.toolCalls[0]!.summary)).toBe(true);
    expect(await m.transcript.countUnprocessed()).toBe(1);
  });

  it('keeps at most 50 tool calls and says how many more there were', async () => {
    const m = await setup();
    await m.transcript.startSession('s1');
    const calls = Array.from({ length: 60 }, (_, i) => ({ name: 'bash', ok: true, summary: `call ${i}` }));
    const obs = await m.transcript.appendObservation({ sessionId: 's1', userMessage: 'x', toolCalls: calls, agentResponse: '' });
    expect(obs.toolCalls).toHaveLength(51);
    expect(obs.toolCalls.at(-1)!.summary).toBe('... and 10 more tool calls, not recorded');
  });
});

describe('event log', () => {
  it('persists events under their seq and replays them after an offset', async () => {
    const m = await setup();
    expect(await m.transcript.lastEventSeq()).toBe(0);
    const events = [
      { seq: 1, type: 'mission_started', at: 10, mission_id: 'm1', text: 'hi' },
      { seq: 2, type: 'assistant_delta', at: 11, mission_id: 'm1', text: 'Hel' },
      { seq: 3, type: 'assistant_delta', at: 12, mission_id: 'm1', text: 'lo' },
    ];
    await m.transcript.appendEvents(events);
    expect(await m.transcript.lastEventSeq()).toBe(3);
    expect(await m.transcript.eventsSince(1)).toEqual(events.slice(1));
    expect(await m.transcript.eventsSince(0, 1)).toEqual(events.slice(0, 1));
    expect(await m.transcript.eventsSince(3)).toEqual([]);
  });

  it('refuses a seq logged twice and never rewrites an event', async () => {
    const m = await setup();
    await m.transcript.appendEvents([{ seq: 1, type: 'a', at: 1 }]);
    await expect(m.transcript.appendEvents([{ seq: 2, type: 'b', at: 2 }, { seq: 1, type: 'c', at: 3 }])).rejects.toBeInstanceOf(DbConstraintError);
    expect(await m.transcript.lastEventSeq()).toBe(1); // the whole batch rolled back
    await expect(m.transcript.db.run("UPDATE events SET type = 'x'")).rejects.toThrow(/append-only/);
  });

  it('survives reopening the database', async () => {
    const m = await setup();
    await m.transcript.appendEvents([{ seq: 1, type: 'a', at: 1 }]);
    await m.close();
    opened = await openTestMemory({ disk: m.disk, paths: m.paths });
    expect(await opened.transcript.eventsSince(0)).toEqual([{ seq: 1, type: 'a', at: 1 }]);
  });
});
