import { describe, expect, it } from 'vitest';
import { ModelError } from './errors.ts';
import { streamOnFirstCall } from './stream-on-first-call.ts';
import type { ModelRequest, ModelStreamEvent, StreamFn } from './types.ts';

const request = {} as ModelRequest;

async function drain(stream: StreamFn): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream(request, new AbortController().signal)) events.push(event);
  return events;
}

describe('streamOnFirstCall', () => {
  const loaded: StreamFn = async function* () {
    yield { type: 'text_delta', text: 'hi' };
  };

  it('loads the client on the first call only, then streams through it', async () => {
    let loads = 0;
    const stream = streamOnFirstCall(async () => (loads++, loaded));
    expect(loads).toBe(0);
    expect(await drain(stream)).toEqual([{ type: 'text_delta', text: 'hi' }]);
    expect(await drain(stream)).toEqual([{ type: 'text_delta', text: 'hi' }]);
    expect(loads).toBe(1);
  });

  it('says a failed load as a model error, and loads again on the next call', async () => {
    let loads = 0;
    const stream = streamOnFirstCall(async () => {
      if (loads++ === 0) throw new TypeError('Failed to fetch dynamically imported module');
      return loaded;
    });
    const failure = await drain(stream).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelError);
    expect((failure as ModelError).message).toMatch(/could not be loaded \(Failed to fetch dynamically imported module\)/);
    expect(await drain(stream)).toEqual([{ type: 'text_delta', text: 'hi' }]);
    expect(loads).toBe(2);
  });

  it("passes the client's own errors on as they are", async () => {
    const broken = new ModelError({ code: 'model_unreachable', message: 'no' });
    const stream = streamOnFirstCall(async () =>
      async function* () {
        yield* [];
        throw broken;
      },
    );
    await expect(drain(stream)).rejects.toBe(broken);
  });
});
