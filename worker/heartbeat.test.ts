// The heartbeat on a fake clock: it beats at its interval with the user's checklist, never in quiet
// hours, never behind a running mission, never with no model to answer; an all-clear beat leaves
// the model's conversation as it was, one with work keeps its turn.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openTestMemory } from '../memory/test-helpers.ts';
import type { ModelRequest, StreamFn } from './agent/types.ts';
import { createHeartbeat, HEARTBEAT_FILE, inQuietHours } from './heartbeat.ts';
import type { StackEvent } from '../protocol/events.ts';
import type { Settings } from '../protocol/settings.ts';
import { createStack } from './stack.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { modelMessage, testStackDeps } from './test-stack.ts';

const SETTINGS: Settings = { provider: 'proxy', endpoint: 'http://proxy.test', model: 'm', heartbeat_minutes: 30, has_api_key: false, ocr_engine: 'local', computer_network: true };

afterEach(() => void vi.useRealTimers());

describe('the heartbeat', () => {
  it('knows quiet hours, across midnight too', () => {
    const at = (h: number, m = 0) => new Date(2026, 10, 26, h, m);
    const night = { from: '22:00', to: '07:00' };
    expect([at(21, 59), at(22), at(3), at(6, 59), at(7)].map((t) => inQuietHours(night, t))).toEqual([false, true, true, true, false]);
    const lunch = { from: '12:00', to: '13:30' };
    expect([at(11, 59), at(12), at(13, 29), at(13, 30)].map((t) => inQuietHours(lunch, t))).toEqual([false, true, true, false]);
    expect(inQuietHours(undefined, at(3))).toBe(false);
  });

  it('beats at its interval with the checklist, and not in quiet hours, behind a mission, or with no model', async () => {
    vi.useFakeTimers({ now: new Date(2026, 10, 26, 9, 0) });
    let settings: Settings = { ...SETTINGS };
    let busy = false;
    let model = true;
    const beats: string[] = [];
    const heartbeat = createHeartbeat({
      settings: () => settings,
      checklist: async () => '- Check the inbox for unpaid invoices',
      busy: () => busy,
      modelReady: async () => model,
      beat: (prompt) => beats.push(prompt),
    });
    heartbeat.schedule();
    await vi.advanceTimersByTimeAsync(29 * 60_000);
    expect(beats).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(beats).toHaveLength(1);
    expect(beats[0]).toContain('reply with exactly HEARTBEAT_OK');
    expect(beats[0]).toContain(`(${HEARTBEAT_FILE}):\n\n- Check the inbox for unpaid invoices`);

    busy = true;
    expect(await heartbeat.tick()).toBe('busy');
    busy = false;
    model = false;
    expect(await heartbeat.tick()).toBe('no_model');
    model = true;
    settings = { ...settings, heartbeat_quiet: { from: '09:00', to: '10:00' } };
    await vi.advanceTimersByTimeAsync(30 * 60_000); // 10:00: the end of quiet hours is not quiet
    expect(beats).toHaveLength(2);
    settings = { ...settings, heartbeat_quiet: { from: '10:00', to: '11:00' } };
    await vi.advanceTimersByTimeAsync(30 * 60_000); // 10:30
    expect(beats).toHaveLength(2);
    expect(await heartbeat.tick()).toBe('quiet');

    settings = { ...settings, heartbeat_minutes: 0 };
    heartbeat.schedule();
    await vi.advanceTimersByTimeAsync(3 * 60 * 60_000);
    expect(beats).toHaveLength(2);
    heartbeat.stop();
  });

  it('an all-clear beat leaves the conversation as it was; a beat with work stays in it', async () => {
    const requests: ModelRequest[] = [];
    const replies = ['Noted.', 'HEARTBEAT_OK', 'The Acme invoice is due tomorrow.', 'And?'];
    const stream: StreamFn = async function* (request) {
      requests.push(structuredClone(request));
      yield modelMessage([{ type: 'text', text: replies[requests.length - 1]! }]);
    };
    const memory = await openTestMemory();
    await memory.stackFiles.writeText(HEARTBEAT_FILE, '- Remind me of invoices due tomorrow\n');
    const stack = await createStack(testStackDeps(memory, { storage: createMemoryStorage(), fetch: (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch, createStream: () => stream }));
    const events: StackEvent[] = [];
    await stack.subscribe(0, (batch) => events.push(...batch));
    const finished = async (n: number) => {
      for (let i = 0; i < 400 && events.filter((e) => e.type === 'mission_finished').length < n; i++) await new Promise((r) => setTimeout(r, 5));
    };
    await stack.request({ id: 'a', method: 'mission', params: { text: 'hello' } });
    await finished(1);
    await stack.request({ id: 'b', method: 'heartbeat', params: {} });
    await finished(2);
    expect(JSON.stringify(requests[1]!.messages.at(-1))).toContain('Remind me of invoices due tomorrow');
    await stack.request({ id: 'c', method: 'heartbeat', params: {} });
    await finished(3);
    await stack.request({ id: 'd', method: 'mission', params: { text: 'anything else?' } });
    await finished(4);
    const roles = (request: ModelRequest) => request.messages.map((m) => (typeof m.content === 'string' ? m.content.slice(0, 20) : m.role));
    // The all-clear beat is gone from what the model sees; the beat with work is there.
    expect(JSON.stringify(requests[2]!.messages)).not.toContain('HEARTBEAT_OK"');
    expect(requests[2]!.messages).toHaveLength(3);
    expect(requests[3]!.messages).toHaveLength(5);
    expect(JSON.stringify(requests[3]!.messages)).toContain('The Acme invoice is due tomorrow.');
    expect(roles(requests[3]!)[0]).toBe('hello');
    // The transcript keeps every beat.
    expect(events.filter((e) => e.type === 'mission_started' && e.kind === 'heartbeat')).toHaveLength(2);
  });
});
