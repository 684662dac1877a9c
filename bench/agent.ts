// agent.overhead_per_tool_call: what the stack adds around one tool call (permission check,
// events and their persistence, memory hooks, the loop itself) with a zero-latency scripted model
// in the same process. Measured from the end of one model call to the start of the next, minus
// the tool's own time, over missions of many calls each.
import { openTestMemory } from '../memory/test-helpers.ts';
import type { Message, ModelStreamEvent, StreamFn } from '../worker/agent/types.ts';
import type { StackEvent } from '../protocol/events.ts';
import { createStack } from '../worker/stack.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { openPdfInNode } from '../worker/documents/node-pdf.ts';
import { createMemoryUserFiles } from '../worker/user-files.ts';
import { percentile, report, round } from './stats.ts';

const MISSIONS = 20;
const CALLS_PER_MISSION = 20;

export async function benchAgent(): Promise<void> {
  const gaps: number[] = [];
  let calls = 0; // in the current mission
  let total = 0;
  let yieldedAt = 0;
  const stream: StreamFn = async function* (): AsyncIterable<ModelStreamEvent> {
    if (calls > 0) gaps.push(performance.now() - yieldedAt);
    calls++;
    total++;
    const more = calls <= CALLS_PER_MISSION;
    const content = more ? [{ type: 'tool_use', id: `t${total}`, name: 'read', input: { path: 'documents/a.txt' } }] : [{ type: 'text', text: 'done' }];
    const message = {
      id: `m${total}`, type: 'message', role: 'assistant', model: 'bench', stop_sequence: null,
      stop_reason: more ? 'tool_use' : 'end_turn', content, usage: { input_tokens: 1, output_tokens: 1 },
    } as unknown as Message;
    if (!more) calls = 0;
    yieldedAt = performance.now();
    yield { type: 'message', message };
  };
  // The tool's own time, measured alone, is taken out of each gap.
  const files = createMemoryUserFiles({ 'documents/a.txt': new TextEncoder().encode('hello\nworld') });
  const stack = await createStack({
    storage: createMemoryStorage(),
    files,
    memory: await openTestMemory(),
    openPdf: openPdfInNode,
    ocr: async () => ({ text: '', confidence: 0 }),
    defaults: { provider: 'proxy', endpoint: 'http://bench.invalid', model: 'bench', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true },
    fetch: (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch,
    createStream: () => stream,
  });
  let finished = 0;
  let onFinished = () => {};
  await stack.subscribe(0, (events: StackEvent[]) => {
    finished += events.filter((event) => event.type === 'mission_finished').length;
    onFinished();
  });
  for (let i = 0; i < MISSIONS; i++) {
    const target = i + 1;
    const done = new Promise<void>((resolve) => (onFinished = () => finished >= target && resolve()));
    await stack.request({ id: `bench-${i}`, method: 'mission', params: { text: 'go' } });
    await done;
  }
  const toolAlone: number[] = [];
  for (let i = 0; i < 200; i++) {
    const started = performance.now();
    await files.read('documents/a.txt');
    toolAlone.push(performance.now() - started);
  }
  const tool = percentile(toolAlone, 50);
  const overhead = gaps.slice(CALLS_PER_MISSION).map((gap) => Math.max(0, gap - tool)); // the first mission warms up
  report({
    bench: 'agent.overhead_per_tool_call',
    value: round(percentile(overhead, 50), 3),
    unit: 'ms',
    n: overhead.length,
    p50: round(percentile(overhead, 50), 3),
    p95: round(percentile(overhead, 95), 3),
    goal: '<5',
  });
}
