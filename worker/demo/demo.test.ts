// The shipped recording against the project's sample documents, and the demo played through a
// whole stack: it reads, extracts, exports and runs its script for real; it is refused while a
// model answers; and it never enters the model's conversation or the memory.
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { openTestMemory } from '../../memory/test-helpers.ts';
import { fixture, invoice } from '../../tests/support/fixtures.ts';
import { SAMPLE_SOURCES } from '../../tests/fixtures/samples.ts';
import { parseScript } from '../agent/scripted/check.ts';
import type { ScriptToolUseBlock } from '../agent/scripted/script.ts';
import type { MessageParam, ModelRequest, StreamFn } from '../agent/types.ts';
import type { Computer } from '../computer.ts';
import { SAMPLE_DOCUMENTS } from '../../protocol/documents.ts';
import type { StackEvent } from '../../protocol/events.ts';
import type { StackApi } from '../../protocol/stack-api.ts';
import { createStack } from '../stack.ts';
import { testComputer, testStackDeps } from '../test-stack.ts';
import { createMemoryUserFiles, type UserFiles } from '../user-files.ts';
import { DEMO_REQUEST, recordedDemoStream } from './demo.ts';
import recording from './recorded-demo.json';
import { createRecordedStream } from './recorded-stream.ts';

const toolUses = () => parseScript(recording).turns.flatMap((turn) => ('content' in turn.reply ? turn.reply.content : [])).filter((b): b is ScriptToolUseBlock => b.type === 'tool_use');

describe('the shipped recording', () => {
  it('is a valid script that starts from the demo request', () => {
    const script = parseScript(recording);
    expect(script.turns[0]?.expect?.last_user_text).toBe(DEMO_REQUEST.slice(0, script.turns[0]!.expect!.last_user_text!.length));
  });

  it('reads and extracts exactly the sample documents, with their true values', () => {
    const saved = toolUses().filter((b) => b.name === 'save_extraction');
    expect(toolUses().filter((b) => b.name === 'read_ocr').map((b) => b.input.document)).toEqual([...SAMPLE_DOCUMENTS]);
    expect(saved.map((b) => b.input.document)).toEqual([...SAMPLE_DOCUMENTS]);
    for (const block of saved) {
      const truth = invoice(SAMPLE_SOURCES[block.input.document as (typeof SAMPLE_DOCUMENTS)[number]].invoice);
      const { vendor, invoice_number, date, currency, subtotal, tax, total } = truth;
      expect(block.input.fields).toEqual({ vendor, invoice_number, date, currency, subtotal, tax, total });
    }
  });
});

/** The computer as far as the demo needs it: runs the recording's pandas script over the CSV it exported. */
function pandasLikeComputer(files: UserFiles, ran: string[]): Computer {
  return testComputer(async (request) => {
    ran.push(request.python ?? request.command ?? '');
    const rows = Papa.parse<Record<string, string>>(new TextDecoder().decode(await files.read('artifacts/invoices.csv')), { header: true }).data;
    return { stdout: `${rows.map((r) => `${r.Vendor} ${r.Currency} ${r.Total}`).join('\n')}\n${rows.length} documents, ${new Set(rows.map((r) => r.Currency)).size} currencies\n` };
  });
}

const unreachable = (async () => {
  throw new TypeError('fetch failed');
}) as typeof fetch;
const healthy = (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch;

async function openDemoStack(options: { fetch: typeof fetch; model?: StreamFn; computer?: boolean }) {
  const files = createMemoryUserFiles();
  const memory = await openTestMemory();
  const ran: string[] = [];
  const modelRequests: ModelRequest[] = [];
  const model: StreamFn =
    options.model ??
    async function* (request) {
      modelRequests.push(structuredClone(request));
      yield { type: 'message', message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } as never };
    };
  const stack = await createStack(
    testStackDeps(memory, {
      files,
      fetch: options.fetch,
      createStream: () => model,
      // The receipt is a scan: the test OCR reads what is printed on it.
      ocr: async () => ({ text: `${invoice('receipt-1').vendor}\nTotal ${invoice('receipt-1').total}`, confidence: 90 }),
      demoStream: () => recordedDemoStream(0),
      ...(options.computer === false ? {} : { createComputer: () => pandasLikeComputer(files, ran) }),
    }),
  );
  const events: StackEvent[] = [];
  await stack.subscribe(0, (batch) => events.push(...batch));
  return { stack, events, ran, memory, modelRequests };
}

async function addSamples(stack: StackApi) {
  for (const name of SAMPLE_DOCUMENTS) {
    const response = await stack.request({ id: `up-${name}`, method: 'upload_file', params: { name, bytes: new Uint8Array(fixture(SAMPLE_SOURCES[name].fixture)) } });
    expect(response.ok).toBe(true);
  }
}

async function finished(events: StackEvent[], missionId: string) {
  for (let i = 0; i < 1000; i++) {
    const done = events.find((e) => e.type === 'mission_finished' && e.mission_id === missionId);
    if (done) return done as Extract<StackEvent, { type: 'mission_finished' }>;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`mission ${missionId} did not finish: ${events.map((e) => e.type).join(', ')}`);
}

describe('play_demo', () => {
  it('plays to a table, a chart, a CSV and the computer’s totals, and leaves the conversation and memory untouched', async () => {
    const { stack, events, ran, memory, modelRequests } = await openDemoStack({ fetch: unreachable });
    await addSamples(stack);
    const started = await stack.request({ id: 'demo-1', method: 'play_demo', params: {} });
    expect(started.ok).toBe(true);
    const missionId = (started as { result: { mission_id: string } }).result.mission_id;
    const end = await finished(events, missionId);
    expect(end.error).toBeUndefined();
    expect(end.status).toBe('completed');
    expect(events.find((e) => e.type === 'mission_queued' && e.mission_id === missionId)).toMatchObject({ kind: 'demo', text: DEMO_REQUEST });

    const snapshot = await stack.snapshot();
    const table = snapshot.windows.find((w) => w.kind === 'table' && w.title === 'Extracted data');
    expect(table?.kind === 'table' && table.rows.map((row) => row.cells.vendor)).toEqual(['Harbour City Plumbing', 'Northwind Logistics Inc.', 'The Daily Grind Cafe']);
    expect(snapshot.windows.some((w) => w.kind === 'chart' && w.title === 'Totals by vendor')).toBe(true);
    expect(events.filter((e) => e.type === 'file_ready').map((e) => (e as { path: string }).path)).toEqual(['artifacts/invoices.csv']);
    expect(ran).toHaveLength(1);
    expect(ran[0]).toContain("pd.read_csv('/workspace/artifacts/invoices.csv')");
    const tools = events.filter((e): e is Extract<StackEvent, { type: 'tool_finished' }> => e.type === 'tool_finished');
    // Calls made in one turn may finish in any order.
    expect(tools.every((t) => t.ok)).toBe(true);
    expect(tools.map((t) => t.name).sort()).toEqual(['bash', 'create_window', 'export_file', 'read_ocr', 'read_ocr', 'read_ocr', 'save_extraction', 'save_extraction', 'save_extraction']);
    // The recorded replies cost nothing and never reached a model.
    expect(end.usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });
    expect(modelRequests).toHaveLength(0);

    // Played again on the same stack, it updates what it made rather than stumbling over it.
    const again = await stack.request({ id: 'demo-2', method: 'play_demo', params: {} });
    const second = await finished(events, (again as { result: { mission_id: string } }).result.mission_id);
    expect(second.error).toBeUndefined();
    const rows = (await stack.snapshot()).windows.find((w) => w.kind === 'table' && w.title === 'Extracted data');
    expect(rows?.kind === 'table' && rows.rows).toHaveLength(3);

    // The next real message starts the model's conversation afresh: no recorded turn in it.
    const answered = await stack.request({ id: 'chat-1', method: 'mission', params: { text: 'what did you find?' } });
    await finished(events, (answered as { result: { mission_id: string } }).result.mission_id);
    expect(modelRequests).toHaveLength(1);
    expect(modelRequests[0]!.messages).toEqual([{ role: 'user', content: 'what did you find?' }] satisfies MessageParam[]);
    // Memory heard of the user's message only, never of the recording.
    const observed = await memory.transcript.unprocessed();
    expect(observed.length).toBeGreaterThan(0);
    expect(JSON.stringify(observed)).toContain('what did you find?');
    expect(JSON.stringify(observed)).not.toMatch(/Harbour City Plumbing|save_extraction|read_ocr/);
  });

  it('is refused while a model answers, and without the sample documents', async () => {
    const connected = await openDemoStack({ fetch: healthy });
    await addSamples(connected.stack);
    const refused = await connected.stack.request({ id: 'demo-1', method: 'play_demo', params: {} });
    expect(refused).toMatchObject({ ok: false, error: { code: 'demo_unavailable' } });
    expect(connected.events.some((e) => e.type === 'mission_queued')).toBe(false);

    const empty = await openDemoStack({ fetch: unreachable });
    const missing = await empty.stack.request({ id: 'demo-2', method: 'play_demo', params: {} });
    expect(missing).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect((missing as { error: { message: string } }).error.message).toContain('harbour-city-plumbing-invoice.pdf, northwind-logistics-invoice.pdf, daily-grind-receipt-scan.jpg are not in this stack');
  });

  it('stops with the reason when a step the recording relied on fails for real', async () => {
    const { stack, events } = await openDemoStack({ fetch: unreachable, computer: false });
    await addSamples(stack);
    const started = await stack.request({ id: 'demo-1', method: 'play_demo', params: {} });
    const end = await finished(events, (started as { result: { mission_id: string } }).result.mission_id);
    expect(end.status).toBe('failed');
    expect(end.error?.code).toBe('demo_off_script');
    expect(end.error?.message).toMatch(/^The recorded demo stopped: a tool call failed \(.*no computer/);
    // What it made before stays.
    expect((await stack.snapshot()).windows.some((w) => w.kind === 'table' && w.title === 'Extracted data')).toBe(true);
  });

  it('a recording is played through the same client as the model: a paced reply arrives in pieces', async () => {
    const stream = createRecordedStream({ name: 'x', turns: [{ reply: { content: [{ type: 'text', text: 'abcdefghijklmnop' }] } }] }, { paceMs: 1 });
    const parts: string[] = [];
    for await (const event of stream({ model: 'm', system: { stable: '', dynamic: '' }, messages: [{ role: 'user', content: 'x' }], tools: [], max_tokens: 10 }, new AbortController().signal)) {
      if (event.type === 'text_delta') parts.push(event.text);
    }
    expect(parts).toEqual(['abcdefgh', 'ijklmnop']);
  });
});
