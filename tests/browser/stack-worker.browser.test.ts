// The real stack worker in Chromium, over comlink: requests answered by id, events in seq order,
// settings and windows kept in OPFS across a new worker.
import * as Comlink from 'comlink';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StackEvent } from '../../protocol/events.ts';
import type { StackApi } from '../../protocol/stack-api.ts';

const workers: Worker[] = [];
let stackId = '';

beforeEach(() => {
  stackId = `browser-test-${crypto.randomUUID().slice(0, 8)}`;
});

function openWorker(): Comlink.Remote<StackApi> {
  const worker = new Worker(new URL('../../worker/stack-worker.ts', import.meta.url), { type: 'module', name: `stack:${stackId}` });
  workers.push(worker);
  return Comlink.wrap<StackApi>(worker);
}

afterEach(() => {
  for (const worker of workers.splice(0)) worker.terminate();
});

describe('stack worker', () => {
  it('answers requests by id and keeps settings in OPFS across a new worker', async () => {
    const stack = openWorker();
    const events: StackEvent[] = [];
    await stack.subscribe(0, Comlink.proxy((batch: StackEvent[]) => void events.push(...batch)));
    const response = await stack.request({ id: 'r1', method: 'update_settings', params: { model: 'claude-browser-test', endpoint: 'http://127.0.0.1:9' } });
    expect(response).toMatchObject({ request_id: 'r1', ok: true, result: { provider: 'proxy', model: 'claude-browser-test', endpoint: 'http://127.0.0.1:9', has_api_key: false } });

    // The endpoint does not answer: the model status says so.
    await expect.poll(() => events.find((e) => e.type === 'model_status' && e.status.state === 'unreachable'), { timeout: 30_000 }).toBeTruthy();
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    const fresh = openWorker();
    expect((await fresh.snapshot()).settings.model).toBe('claude-browser-test');
  });

  it('rejects a malformed request as data', async () => {
    const stack = openWorker();
    expect(await stack.request({ id: 'r2', method: 'mission', params: { text: '' } })).toMatchObject({
      request_id: 'r2',
      ok: false,
      error: { code: 'bad_request' },
    });
  });

  it('ends a mission against an unreachable endpoint with a clear error', async () => {
    const stack = openWorker();
    await stack.request({ id: 's', method: 'update_settings', params: { endpoint: 'http://127.0.0.1:9' } });
    const events: StackEvent[] = [];
    await stack.subscribe(0, Comlink.proxy((batch: StackEvent[]) => void events.push(...batch)));
    await stack.request({ id: 'm', method: 'mission', params: { text: 'hello' } });
    await expect.poll(() => events.find((e) => e.type === 'mission_finished'), { timeout: 15_000 }).toMatchObject({
      status: 'failed',
      error: { code: 'model_unreachable' },
    });
  });

  it('opens right after the previous worker on the same stack was terminated (a reload)', async () => {
    const first = openWorker();
    await first.request({ id: 'a', method: 'update_settings', params: { model: 'before-reload', endpoint: 'http://127.0.0.1:9' } });
    const events: StackEvent[] = [];
    await first.subscribe(0, Comlink.proxy((batch: StackEvent[]) => void events.push(...batch)));
    await first.request({ id: 'm', method: 'mission', params: { text: 'hello' } });
    await expect.poll(() => events.find((e) => e.type === 'mission_finished'), { timeout: 15_000 }).toBeTruthy();
    workers.pop()!.terminate();
    const second = openWorker();
    expect((await second.snapshot()).settings.model).toBe('before-reload');
  });
});
