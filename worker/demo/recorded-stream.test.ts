import { describe, expect, it } from 'vitest';
import { ModelError } from '../agent/errors.ts';
import type { FakeScript } from '../agent/scripted/script.ts';
import type { MessageParam, ModelRequest, ModelStreamEvent, StreamFn } from '../agent/types.ts';
import { createRecordedStream } from './recorded-stream.ts';

const request = (messages: MessageParam[]): ModelRequest => ({ model: 'any', system: { stable: 's', dynamic: '' }, messages, tools: [], max_tokens: 100 });

async function collect(stream: StreamFn, messages: MessageParam[], signal = new AbortController().signal): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream(request(messages), signal)) events.push(event);
  return events;
}

const final = (events: ModelStreamEvent[]) => (events.at(-1) as Extract<ModelStreamEvent, { type: 'message' }>).message;

const script: FakeScript = {
  name: 'two turns',
  turns: [
    {
      expect: { last_user_text: 'make a table' },
      reply: { content: [{ type: 'text', text: 'Opening a table for you.' }, { type: 'tool_use', name: 'create_window', input: { kind: 'table', title: 'T' } }], chunk_chars: 5 },
    },
    {
      expect: { tool_result: { contains: 'Opened' } },
      reply: { content: [{ type: 'tool_use', name: 'update_window', input: { window_id: '{{tool_result:id: (w_\\w+)}}' } }] },
    },
  ],
};

const toolResult = (id: string, content: string, isError = false): MessageParam => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) }] });

describe('createRecordedStream', () => {
  it('streams each recorded turn through the Anthropic client: text as it comes, then the whole message, at no cost', async () => {
    const stream = createRecordedStream(script, { playId: 'p1' });
    const events = await collect(stream, [{ role: 'user', content: 'please make a table' }]);
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text)).toEqual(['Openi', 'ng a ', 'table', ' for ', 'you.']);
    const message = final(events);
    expect(message.content).toEqual([
      { type: 'text', text: 'Opening a table for you.' },
      { type: 'tool_use', id: 'toolu_demo_p1_0_0_1', name: 'create_window', input: { kind: 'table', title: 'T' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });

    // Values the recording could not know come from what the tools returned.
    const second = final(await collect(stream, [toolResult('toolu_demo_p1_0_0_1', 'Opened table window "T" (id: w_abc123).')]));
    expect(second.content).toEqual([{ type: 'tool_use', id: 'toolu_demo_p1_1_0_0', name: 'update_window', input: { window_id: 'w_abc123' } }]);
  });

  it('stops, saying why, when a tool call the recording relied on failed or read something else', async () => {
    const failed = createRecordedStream(script);
    await collect(failed, [{ role: 'user', content: 'make a table' }]);
    const error = await collect(failed, [toolResult('t', 'There is no such window.', true)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).shape.code).toBe('demo_off_script');
    expect((error as ModelError).message).toMatch(/^The recorded demo stopped: a tool call failed \(There is no such window\.\)/);

    const elsewhere = createRecordedStream(script);
    const wrong = await collect(elsewhere, [{ role: 'user', content: 'something else' }]).catch((e: unknown) => e);
    expect((wrong as ModelError).message).toContain('last_user_text: expected the last user message to contain "make a table"');
  });

  it('stops when the recording has no reply left', async () => {
    const stream = createRecordedStream({ name: 'one', turns: [{ reply: { content: [{ type: 'text', text: 'only this' }] } }] });
    await collect(stream, [{ role: 'user', content: 'hi' }]);
    const error = (await collect(stream, [{ role: 'user', content: 'again' }]).catch((e: unknown) => e)) as ModelError;
    expect(error.shape).toMatchObject({ code: 'demo_off_script' });
    expect(error.message).toContain('the recording has no reply for request 2');
  });

  it('a paced reply stops promptly when the mission is stopped', async () => {
    const stream = createRecordedStream({ name: 'slow', turns: [{ reply: { content: [{ type: 'text', text: 'x'.repeat(400) }], chunk_chars: 1 } }] }, { paceMs: 50 });
    const controller = new AbortController();
    const started = Date.now();
    const seen: ModelStreamEvent[] = [];
    const error = await (async () => {
      for await (const event of stream(request([{ role: 'user', content: 'go' }]), controller.signal)) {
        seen.push(event);
        if (seen.length === 2) controller.abort();
      }
    })().catch((e: unknown) => e);
    expect((error as ModelError).shape.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
