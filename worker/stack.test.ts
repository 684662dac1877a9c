import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamFn } from './agent/types.ts';
import type { ComputerStatus } from '../protocol/computer.ts';
import type { StackEvent } from '../protocol/events.ts';
import type { StackApi } from '../protocol/stack-api.ts';
import { createStack } from './stack.ts';
import { modelMessage, testComputer, testStackDeps } from './test-stack.ts';
import { DbFullError } from '../memory/index.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { createMemoryUserFiles } from './user-files.ts';
import { openTestMemory } from '../memory/test-helpers.ts';
import { fixture } from '../tests/support/fixtures.ts';

const healthy = (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch;

const message = modelMessage;

async function openStack(stream: StreamFn, storage = createMemoryStorage(), fetchFn = healthy, extra: Partial<Parameters<typeof createStack>[0]> = {}) {
  const memory = extra.memory ?? (await openTestMemory());
  const stack = await createStack(testStackDeps(memory, { storage, fetch: fetchFn, createStream: () => stream, ...extra }));
  const events: StackEvent[] = [];
  await stack.subscribe(0, (batch) => events.push(...batch));
  return { stack, events, storage, memory };
}

async function until(events: StackEvent[], type: StackEvent['type']) {
  for (let i = 0; i < 200; i++) {
    if (events.some((e) => e.type === type)) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no ${type} event; got ${events.map((e) => e.type).join(', ')}`);
}

const mission = (stack: StackApi, text: string, id = 'req-1') => stack.request({ id, method: 'mission', params: { text } });

describe('stack', () => {
  it('answers a request with its request_id and streams a mission as events with increasing seq', async () => {
    const stream: StreamFn = async function* () {
      yield { type: 'text_delta', text: 'Hi ' };
      yield { type: 'text_delta', text: 'there' };
      yield message([{ type: 'text', text: 'Hi there' }]);
    };
    const { stack, events } = await openStack(stream);
    const response = await mission(stack, 'hello');
    expect(response).toEqual({ request_id: 'req-1', ok: true, result: { mission_id: 'm_1' } });
    await until(events, 'mission_finished');
    // The health check answers whenever it answers; everything else comes in order.
    const types = events.map((e) => e.type).filter((type) => type !== 'model_status');
    expect(types).toEqual(['mission_queued', 'mission_started', 'assistant_delta', 'assistant_delta', 'assistant_message_end', 'mission_finished']);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(events.at(-1)).toMatchObject({ status: 'completed', mission_id: 'm_1' });
  });

  it('opens a notes window through create_window and keeps it in storage', async () => {
    let call = 0;
    const stream: StreamFn = async function* () {
      call++;
      if (call === 1) yield message([{ type: 'tool_use', id: 'tu1', name: 'create_window', input: { kind: 'notes', title: 'Plan', content: '# Steps' } }]);
      else yield message([{ type: 'text', text: 'Opened.' }]);
    };
    const { stack, events, storage } = await openStack(stream);
    await mission(stack, 'make a plan');
    await until(events, 'mission_finished');
    const opened = events.find((e) => e.type === 'window_opened');
    expect(opened).toMatchObject({ window: { id: 'w_2', kind: 'notes', title: 'Plan', content: '# Steps' } });
    expect(events.find((e) => e.type === 'tool_finished')).toMatchObject({ ok: true, summary: 'Opened notes window "Plan" (id: w_2).' });

    const again = await openStack(stream, storage);
    expect((await again.stack.snapshot()).windows.map((w) => w.title)).toEqual(['Plan']);
    await again.stack.request({ id: 'r', method: 'canvas_interaction', params: { type: 'window_closed', window_id: 'w_2' } });
    expect((await again.stack.snapshot()).windows).toEqual([]);
  });

  it('runs missions one at a time in arrival order', async () => {
    const order: string[] = [];
    const stream: StreamFn = async function* (request) {
      const last = request.messages.at(-1)!;
      const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
      order.push(`start ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push(`end ${text}`);
      yield message([{ type: 'text', text: 'ok' }]);
    };
    const { stack, events } = await openStack(stream);
    await mission(stack, 'one', 'a');
    await mission(stack, 'two', 'b');
    for (let i = 0; i < 100 && events.filter((e) => e.type === 'mission_finished').length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(order).toEqual(['start one', 'end one', 'start two', 'end two']);
  });

  it('rejects malformed requests as data, never throwing', async () => {
    const { stack } = await openStack(async function* () {});
    expect(await mission(stack, '   ')).toMatchObject({ request_id: 'req-1', ok: false, error: { code: 'bad_request' } });
    expect(await stack.request({ id: '', method: 'mission', params: { text: 'x' } })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(await stack.request({ id: 'z', method: 'nope', params: {} } as never)).toMatchObject({ ok: false, request_id: 'z' });
    expect(await stack.request({ id: 's', method: 'update_settings', params: { endpoint: 'ftp://x' } })).toMatchObject({
      ok: false, error: { code: 'bad_request', message: 'The model endpoint must be an http:// or https:// address.' },
    });
  });

  it('persists settings and reports them as an event', async () => {
    const { stack, events, storage } = await openStack(async function* () {});
    const response = await stack.request({ id: 's', method: 'update_settings', params: { model: 'claude-x', endpoint: 'https://proxy.example/' } });
    expect(response).toEqual({ request_id: 's', ok: true, result: { provider: 'proxy', model: 'claude-x', endpoint: 'https://proxy.example', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true } });
    expect(await stack.request({ id: 'h', method: 'update_settings', params: { heartbeat_minutes: -1 } })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(events.find((e) => e.type === 'settings_changed')).toBeTruthy();
    const again = await openStack(async function* () {}, storage);
    expect((await again.stack.snapshot()).settings.model).toBe('claude-x');
  });

  it('reports a proxy without a key as not configured', async () => {
    const noKey = (async () => Response.json({ ok: true, anthropic: false })) as typeof fetch;
    const { events } = await openStack(async function* () {}, createMemoryStorage(), noKey);
    await until(events, 'model_status');
    expect(events[0]).toMatchObject({ type: 'model_status', status: { state: 'not_configured' } });
    expect((events[0] as { status: { message: string } }).status.message).toContain('ANTHROPIC_API_KEY');
  });

  it('replays events after an offset without duplicates', async () => {
    const stream: StreamFn = async function* () {
      yield message([{ type: 'text', text: 'ok' }]);
    };
    const { stack, events } = await openStack(stream);
    await mission(stack, 'x');
    await until(events, 'mission_finished');
    const late: StackEvent[] = [];
    await stack.subscribe(2, (batch) => late.push(...batch));
    expect(late.map((e) => e.seq)).toEqual(events.filter((e) => e.seq > 2).map((e) => e.seq));
  });

  it('aborts a running mission', async () => {
    const stream: StreamFn = async function* (_request, signal) {
      yield { type: 'text_delta', text: 'thinking' };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      throw new Error('aborted');
    };
    const { stack, events } = await openStack(stream);
    await mission(stack, 'long');
    await until(events, 'assistant_delta');
    expect(await stack.request({ id: 'a', method: 'abort', params: {} })).toEqual({ request_id: 'a', ok: true, result: { aborted: true } });
    await until(events, 'mission_finished');
    expect(events.at(-1)).toMatchObject({ type: 'mission_finished', status: 'aborted' });
  });

  it('applies a cell edit and tells the agent in its next turn', async () => {
    const requests: string[] = [];
    let call = 0;
    const stream: StreamFn = async function* (request) {
      call++;
      requests.push(JSON.stringify(request.messages.at(-1)));
      if (call === 1) {
        yield message([{ type: 'tool_use', id: 'tu1', name: 'create_window', input: { kind: 'table', title: 'Invoices', columns: [{ key: 'vendor' }], rows: [{ vendor: 'acme' }] } }]);
      } else yield message([{ type: 'text', text: 'ok' }]);
    };
    const { stack, events } = await openStack(stream);
    await mission(stack, 'make a table');
    await until(events, 'mission_finished');
    const edit = await stack.request({ id: 'e', method: 'canvas_interaction', params: { type: 'cell_edited', window_id: 'w_2', row_id: 'r1', column: 'vendor', value: 'ACME' } });
    expect(edit).toEqual({ request_id: 'e', ok: true, result: {} });
    expect((await stack.snapshot()).windows[0]).toMatchObject({ rows: [{ id: 'r1', cells: { vendor: 'ACME' } }] });
    const bad = await stack.request({ id: 'b', method: 'canvas_interaction', params: { type: 'cell_edited', window_id: 'w_2', row_id: 'r9', column: 'vendor', value: 'x' } });
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad_request', message: 'Table w_2 has no row r9.' } });

    await mission(stack, 'thanks', 'req-2');
    for (let i = 0; i < 100 && events.filter((e) => e.type === 'mission_finished').length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(requests.at(-1)).toContain('The user edited table \\"Invoices\\" (w_2), row r1, column \\"vendor\\" (vendor): \\"acme\\" -> \\"ACME\\".');
    expect(requests.at(-1)).toContain('thanks');
  });

  it('takes the user\'s notes edits, and the agent hears the latest once', async () => {
    const requests: string[] = [];
    const stream: StreamFn = async function* (request) {
      requests.push(JSON.stringify(request.messages.at(-1)));
      yield message([{ type: 'text', text: 'ok' }]);
    };
    const { stack } = await openStack(stream);
    const opened = await stack.request({ id: 'o', method: 'open_window', params: { kind: 'notes', title: 'Plan' } });
    const id = opened.ok ? (opened.result as { id: string }).id : '';
    for (const content of ['# Plan', '# Plan\n- call ACME']) {
      expect(await stack.request({ id: `n${content.length}`, method: 'canvas_interaction', params: { type: 'notes_edited', window_id: id, content } })).toMatchObject({ ok: true });
    }
    expect((await stack.snapshot()).windows.find((w) => w.id === id)).toMatchObject({ content: '# Plan\n- call ACME' });
    const table = await stack.request({ id: 'x', method: 'canvas_interaction', params: { type: 'notes_edited', window_id: 'nope', content: 'x' } });
    expect(table).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    await mission(stack, 'go on', 'req-n');
    for (let i = 0; i < 100 && requests.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
    expect(requests[0]).toContain('The user edited the notes \\"Plan\\"');
    expect(requests[0]).toContain('- call ACME');
    expect(requests[0]!.match(/edited the notes/g)).toHaveLength(1);
  });

  it('reads a file from user space and refuses paths outside it', async () => {
    const { stack } = await openStack(async function* () {});
    expect(await stack.request({ id: 'f', method: 'read_file', params: { path: 'documents/none.pdf' } })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await stack.request({ id: 'g', method: 'read_file', params: { path: '.os/settings.json' } })).toMatchObject({ ok: false, error: { code: 'bad_request' } });
  });

  it('queues a second mission behind the first, and runs heartbeats behind the same lock', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const stream: StreamFn = async function* (request) {
      calls++;
      if (calls === 1) await gate;
      const last = request.messages.at(-1)!;
      yield message([{ type: 'text', text: JSON.stringify(last.content).includes('heartbeat') ? 'HEARTBEAT_OK' : 'ok' }]);
    };
    const { stack, events } = await openStack(stream);
    await mission(stack, 'first', 'a');
    await mission(stack, 'second', 'b');
    await stack.request({ id: 'h', method: 'heartbeat', params: {} });
    const queued = events.filter((e) => e.type === 'mission_queued');
    expect(queued.map((e) => [e.kind, e.position])).toEqual([['chat', 0], ['chat', 1], ['heartbeat', 2]]);
    expect(events.filter((e) => e.type === 'mission_started')).toHaveLength(1);
    release();
    for (let i = 0; i < 100 && events.filter((e) => e.type === 'mission_finished').length < 3; i++) await new Promise((r) => setTimeout(r, 5));
    expect(events.filter((e) => e.type === 'mission_started').map((e) => e.kind)).toEqual(['chat', 'chat', 'heartbeat']);
  });

  it('compacts older turns when the prompt nears the window, flushing memory first', async () => {
    const requests: { system: string; first: string }[] = [];
    const stream: StreamFn = async function* (request) {
      requests.push({ system: request.system.stable, first: JSON.stringify(request.messages[0]) });
      const summarising = request.tools.length === 0;
      yield {
        type: 'message',
        message: {
          id: 'x', type: 'message', role: 'assistant', model: 'm', stop_sequence: null, stop_reason: 'end_turn',
          content: [{ type: 'text', text: summarising ? 'SUMMARY OF EARLIER' : 'ok' }],
          usage: { input_tokens: 900, output_tokens: 10 },
        } as never,
      };
    };
    const { stack, events, memory } = await openStack(stream, createMemoryStorage(), healthy, {
      compaction: { contextWindow: 1000, threshold: 0.8, keepRecent: 2 },
    });
    for (const [i, text] of ['one', 'two', 'three'].entries()) {
      await mission(stack, text, `r${i}`);
      for (let k = 0; k < 100 && events.filter((e) => e.type === 'mission_finished').length < i + 1; k++) await new Promise((r) => setTimeout(r, 5));
    }
    const compacted = events.filter((e) => e.type === 'context_compacted');
    expect(compacted.length).toBeGreaterThan(0);
    // The pre-compaction flush wrote every finished turn as an observation first.
    expect((await memory.transcript.unprocessed()).length + (await memory.memory.recentRuns(10)).length).toBeGreaterThan(0);
    expect(requests.at(-1)!.first).toContain('SUMMARY OF EARLIER');
    expect(requests.at(-1)!.first).toContain('two'); // the first kept turn carries the summary
  });

  it('switches provider, keeps the user key apart from the settings, and never returns it', async () => {
    const seen: unknown[] = [];
    const { stack, storage } = await openStack(async function* () {}, createMemoryStorage(), healthy, {
      createStream: (connection) => {
        seen.push(connection);
        return async function* () {
          yield message([{ type: 'text', text: 'ok' }]);
        };
      },
    });
    const direct = await stack.request({ id: 'p', method: 'update_settings', params: { provider: 'anthropic', api_key: 'user-key-9' } });
    expect(direct).toEqual({ request_id: 'p', ok: true, result: { provider: 'anthropic', endpoint: 'https://api.anthropic.com', model: 'test-model', heartbeat_minutes: 0, has_api_key: true, ocr_engine: 'local', computer_network: true } });
    expect(storage.files.get('settings.json')).not.toContain('user-key-9');
    expect(storage.files.get('secrets.json')).toContain('user-key-9');
    expect(JSON.stringify(await stack.snapshot())).not.toContain('user-key-9');
    await mission(stack, 'hi');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.at(-1)).toEqual({ provider: 'anthropic', endpoint: 'https://api.anthropic.com', apiKey: 'user-key-9', deviceToken: null });

    await stack.request({ id: 'q', method: 'update_settings', params: { provider: 'proxy', api_key: null } });
    expect((await stack.snapshot()).settings).toMatchObject({ provider: 'proxy', endpoint: 'http://proxy.test', has_api_key: false });
    await mission(stack, 'again', 'r2');
    await new Promise((r) => setTimeout(r, 20));
    expect(seen.at(-1)).toEqual({ provider: 'proxy', endpoint: 'http://proxy.test', apiKey: null, deviceToken: null });
  });

  it('exports a table as a file the user can download, and on request for the table window', async () => {
    let call = 0;
    const stream: StreamFn = async function* () {
      call++;
      if (call === 1) yield message([{ type: 'tool_use', id: 't1', name: 'create_window', input: { kind: 'table', title: 'Invoices', columns: [{ key: 'vendor', label: 'Vendor' }], rows: [{ vendor: 'ACME' }] } }]);
      else if (call === 2) yield message([{ type: 'tool_use', id: 't2', name: 'export_file', input: { window_id: 'w_2', format: 'csv' } }]);
      else yield message([{ type: 'text', text: 'done' }]);
    };
    const { stack, events } = await openStack(stream);
    await mission(stack, 'export it');
    await until(events, 'mission_finished');
    expect(events.find((e) => e.type === 'file_ready')).toMatchObject({ path: 'artifacts/Invoices.csv', mime: 'text/csv', mission_id: 'm_1' });
    const file = await stack.request({ id: 'f', method: 'read_file', params: { path: 'artifacts/Invoices.csv' } });
    expect(file.ok && new TextDecoder().decode(file.result.bytes)).toBe('Vendor\r\nACME');
    const exported = await stack.request({ id: 'x', method: 'export_window', params: { window_id: 'w_2', format: 'json' } });
    expect(exported.ok && JSON.parse(new TextDecoder().decode(exported.result.bytes))).toEqual([{ vendor: 'ACME' }]);
    expect(exported.ok && exported.result.filename).toBe('Invoices.json');
  });

  it('reads an uploaded PDF\'s text into page artifacts and a .txt beside it, and names a broken one', async () => {
    const pdf = new Uint8Array(fixture('two-column-2.pdf'));
    const files = createMemoryUserFiles();
    const { stack, events } = await openStack(async function* () {}, createMemoryStorage(), healthy, { files });
    const uploaded = await stack.request({ id: 'u', method: 'upload_file', params: { name: 'two-column-2.pdf', bytes: pdf } });
    expect(uploaded).toMatchObject({ ok: true, result: { filename: 'two-column-2.pdf', status: 'uploaded' } });
    await until(events, 'document_updated');
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'document_updated' && e.document.status === 'ready'); i++) await new Promise((r) => setTimeout(r, 10));
    const ready = events.filter((e) => e.type === 'document_updated').at(-1);
    expect(ready).toMatchObject({ document: { status: 'ready', page_count: 1 } });
    expect(events.some((e) => e.type === 'document_progress' && e.page === 1)).toBe(true);
    expect(new TextDecoder().decode(files.files.get('documents/two-column-2.pdf.txt'))).toMatch(/^--- page 1 ---\n/);
    expect(files.files.has(`ocr/${uploaded.ok ? uploaded.result.id : ''}/page-1.txt`)).toBe(true);

    const broken = pdf.slice(0, 300);
    await stack.request({ id: 'b', method: 'upload_file', params: { name: 'broken.pdf', bytes: broken } });
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'document_updated' && e.document.status === 'failed'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(events.find((e) => e.type === 'document_updated' && e.document.status === 'failed')).toMatchObject({ document: { error: expect.stringMatching(/^broken\.pdf could not be read as a PDF/) } });

    // A password-protected PDF is stored, shown, and named as such; nothing else is disturbed.
    const locked = new Uint8Array(readFileSync(new URL('./documents/fixtures/password-protected.pdf', import.meta.url)));
    await stack.request({ id: 'l', method: 'upload_file', params: { name: 'locked.pdf', bytes: locked } });
    const lockedFailure = () => events.find((e) => e.type === 'document_updated' && e.document.status === 'failed' && e.document.filename === 'locked.pdf');
    for (let i = 0; i < 300 && !lockedFailure(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(lockedFailure()).toMatchObject({ document: { error: expect.stringContaining('password-protected') } });
    expect((await stack.snapshot()).windows.some((w) => w.kind === 'document' && w.title === 'locked.pdf')).toBe(true);
  });

  it('while the computer runs, the OCR engine keeps no idle workers: they end once the scans queued are read, and when it starts', async () => {
    let releases = 0;
    const ocr = Object.assign(async () => ({ text: 'scanned text of a test image', confidence: 90 }), { release: () => (releases++, 0) });
    let emitStatus!: (status: ComputerStatus) => void;
    const computer = { ...testComputer(async () => ({})), status: { state: 'off' } as ComputerStatus };
    const { stack, events } = await openStack(async function* () {}, createMemoryStorage(), healthy, {
      ocr,
      createComputer: (emit) => ((emitStatus = emit), computer),
    });
    const scan = new Uint8Array(fixture('plain-1_scan.jpg'));
    const read = async (name: string) => {
      await stack.request({ id: name, method: 'upload_file', params: { name, bytes: scan } });
      const done = () => events.some((e) => e.type === 'document_updated' && e.document.filename === name && e.document.status === 'ready');
      for (let i = 0; i < 300 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(done()).toBe(true);
    };
    // The computer off: the engine is kept for the next scan (its own idle time).
    await read('first.jpg');
    expect(releases).toBe(0);
    emitStatus({ state: 'waking' });
    expect(releases).toBe(1);
    // Once: a worker warmed for a scan attached while it starts is not ended by each status.
    emitStatus({ state: 'ready', woke: true, wake_ms: 200 });
    expect(releases).toBe(1);
    computer.status = { state: 'ready', woke: true, wake_ms: 200 };
    await read('second.jpg');
    expect(releases).toBe(2);
  });

  it('an upload opens a document window while fewer than six are open; the rest wait in the chat until the user opens them', async () => {
    const { stack, events } = await openStack(async function* () {});
    const pdf = new Uint8Array(fixture('two-column-2.pdf'));
    for (let i = 1; i <= 8; i++) expect(await stack.request({ id: `u${i}`, method: 'upload_file', params: { name: `invoice-${i}.pdf`, bytes: pdf } })).toMatchObject({ ok: true });
    const documentWindows = async () => (await stack.snapshot()).windows.filter((win) => win.kind === 'document').map((win) => win.title);
    expect(await documentWindows()).toEqual(['invoice-1.pdf', 'invoice-2.pdf', 'invoice-3.pdf', 'invoice-4.pdf', 'invoice-5.pdf', 'invoice-6.pdf']);
    expect(events.filter((e) => e.type === 'document_added').map((e) => e.type === 'document_added' && e.window)).toEqual([true, true, true, true, true, true, false, false]);
    const opened = await stack.request({ id: 'o', method: 'open_window', params: { kind: 'document', path: 'documents/invoice-8.pdf' } });
    expect(opened).toMatchObject({ ok: true, result: { kind: 'document', title: 'invoice-8.pdf', path: 'documents/invoice-8.pdf', mime: 'application/pdf' } });
    const again = await stack.request({ id: 'o2', method: 'open_window', params: { kind: 'document', path: 'documents/invoice-8.pdf' } });
    expect(again.ok && opened.ok && again.result.id === opened.result.id).toBe(true);
    expect(await stack.request({ id: 'o3', method: 'open_window', params: { kind: 'document', path: 'documents/nope.pdf' } })).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('a full disk: the message and the upload are refused saying so, the running mission stops, nothing half-added stays', async () => {
    let release: () => void = () => {};
    const stream: StreamFn = async function* (_request, signal) {
      yield { type: 'text_delta', text: 'Working' };
      // A long answer, still streaming when the disk fills up.
      await new Promise<void>((resolve, reject) => {
        release = resolve;
        signal.addEventListener('abort', () => reject(new DOMException('stopped', 'AbortError')), { once: true });
      });
      yield message([{ type: 'text', text: 'Working on it.' }]);
    };
    const quota = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    const files = createMemoryUserFiles();
    const memory = await openTestMemory();
    const { stack, events } = await openStack(stream, createMemoryStorage(), healthy, { files, memory });
    expect(await mission(stack, 'first')).toMatchObject({ ok: true });
    await until(events, 'assistant_delta');

    // The disk fills: the events of the running mission cannot be stored any more.
    const append = memory.transcript.appendEvents.bind(memory.transcript);
    let full = true;
    memory.transcript.appendEvents = async (batch) => {
      if (full) throw new DbFullError('transcript.db: INSERT INTO events: disk I/O error (the browser\'s storage is full)');
      return append(batch);
    };
    const refused = await mission(stack, 'second', 'req-2');
    expect(refused).toMatchObject({ ok: false, error: { code: 'storage', message: expect.stringMatching(/^Your message was not saved: the browser's storage for Stackdocs is full\. Delete documents/) } });
    await until(events, 'mission_finished');
    expect(events.find((e) => e.type === 'mission_finished')).toMatchObject({ status: 'failed', error: { code: 'storage', message: expect.stringContaining('storage for Stackdocs is full') } });
    release();

    const write = files.write.bind(files);
    files.write = async () => {
      throw quota(); // as OPFS does when closing a write that does not fit
    };
    full = false;
    const bytes = new TextEncoder().encode('many words');
    const upload = await stack.request({ id: 'u', method: 'upload_file', params: { name: 'big.txt', bytes } });
    expect(upload).toMatchObject({ ok: false, error: { code: 'storage', message: expect.stringMatching(/^big\.txt was not added: the browser's storage for Stackdocs is full/) } });
    // The file fits but its record does not: the file goes again.
    files.write = write;
    const addDocument = memory.documents.addDocument.bind(memory.documents);
    memory.documents.addDocument = async () => {
      throw new DbFullError('memory.db: INSERT INTO documents: disk I/O error');
    };
    expect(await stack.request({ id: 'v', method: 'upload_file', params: { name: 'big.txt', bytes } })).toMatchObject({ ok: false, error: { code: 'storage' } });
    expect([...files.files.keys()]).toEqual([]);
    memory.documents.addDocument = addDocument;
    expect(await memory.documents.listDocuments()).toEqual([]);
  });

  it('refuses an upload the browser says will not fit, naming both sizes, before writing anything', async () => {
    const { stack } = await openStack(async function* () {});
    vi.stubGlobal('navigator', { storage: { estimate: async () => ({ usage: 4_990_000_000, quota: 5_000_000_000 }) } });
    const bytes = new Uint8Array(12_000_000).fill(65);
    expect(await stack.request({ id: 'u', method: 'upload_file', params: { name: 'scan.txt', bytes } })).toEqual({
      request_id: 'u',
      ok: false,
      error: {
        code: 'storage',
        message: "scan.txt was not added: it needs 12 MB and the browser's storage for Stackdocs has 10 MB left (it holds 5.0 GB). Delete documents or stacks you no longer need, or free space on this device, then try again.",
      },
    });
    expect(await stack.request({ id: 'small', method: 'upload_file', params: { name: 'note.txt', bytes: bytes.slice(0, 1000) } })).toMatchObject({ ok: true });
  });

  it('reads a picked file itself: stored as its bytes; one over the limit refused unread; one gone since it was picked named', async () => {
    const files = createMemoryUserFiles();
    const { stack } = await openStack(async function* () {}, createMemoryStorage(), healthy, { files });
    const picked = new Blob([new TextEncoder().encode('twelve words of notes')]);
    expect(await stack.request({ id: 'p', method: 'upload_file', params: { name: 'notes.txt', bytes: picked } })).toMatchObject({ ok: true, result: { filename: 'notes.txt' } });
    expect(new TextDecoder().decode(files.files.get('documents/notes.txt'))).toBe('twelve words of notes');

    let read = false;
    class Picked extends Blob {
      override async arrayBuffer(): Promise<ArrayBuffer> {
        read = true;
        throw new DOMException('The requested file could not be read', 'NotReadableError');
      }
    }
    const huge = new Picked([new Uint8Array(26 * 1024 * 1024)]);
    expect(await stack.request({ id: 'h', method: 'upload_file', params: { name: 'huge.pdf', bytes: huge } })).toEqual({
      request_id: 'h',
      ok: false,
      error: { code: 'bad_request', message: 'huge.pdf is 26.0 MB; the limit is 25 MB per file.' },
    });
    expect(read).toBe(false);
    expect(await stack.request({ id: 'g', method: 'upload_file', params: { name: 'gone.pdf', bytes: new Picked(['%PDF']) } })).toMatchObject({
      ok: false,
      error: { code: 'bad_request', message: 'gone.pdf could not be read: it was moved, changed or deleted after it was picked. Add it again.' },
    });
    expect(read).toBe(true);
    expect([...files.files.keys()].filter((path) => path.startsWith('documents/'))).toEqual(['documents/notes.txt']);
  });

  /** A model that answers once released, and a computer that records what it is asked to do. */
  function heldMission() {
    const held = { release: () => {} };
    const stream: StreamFn = async function* () {
      await new Promise<void>((resolve) => (held.release = resolve));
      yield message([{ type: 'text', text: 'done' }]);
    };
    const actions: string[] = [];
    const computer = { ...testComputer(async () => ({})), control: async (action: string) => (actions.push(action), { state: 'suspended' as const }) };
    return { stream, actions, computer, release: () => held.release() };
  }

  it('a hidden page rests the computer, but not while the agent works', async () => {
    const { stream, actions, computer, release } = heldMission();
    const { stack, events } = await openStack(stream, createMemoryStorage(), healthy, { createComputer: () => computer });
    await mission(stack, 'work');
    expect(await stack.request({ id: 'r1', method: 'computer', params: { action: 'rest' } })).toMatchObject({ ok: true });
    expect(actions).toEqual([]);
    release();
    await until(events, 'mission_finished');
    expect(await stack.request({ id: 'r2', method: 'computer', params: { action: 'rest' } })).toMatchObject({ ok: true, result: { state: 'suspended' } });
    expect(actions).toEqual(['rest']);
  });

  it('closes for a copy: the computer saved, the databases closed, nothing served after; not while the agent works', async () => {
    const { stream, actions, computer, release } = heldMission();
    const { stack, events, memory } = await openStack(stream, createMemoryStorage(), healthy, { createComputer: () => computer });
    const closeDatabases = memory.close.bind(memory);
    memory.close = async () => {
      actions.push('databases closed');
      await closeDatabases();
    };
    await mission(stack, 'work');
    expect(await stack.request({ id: 'c1', method: 'close', params: {} })).toMatchObject({ ok: false, error: { code: 'busy' } });
    expect(actions).toEqual([]);
    release();
    await until(events, 'mission_finished');
    expect(await stack.request({ id: 'c2', method: 'close', params: {} })).toEqual({ request_id: 'c2', ok: true, result: {} });
    expect(actions).toEqual(['suspend', 'databases closed']);
    expect(await stack.request({ id: 'after', method: 'get_settings', params: {} })).toMatchObject({ ok: false, error: { code: 'interrupted' } });
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
});
