import { describe, expect, it } from 'vitest';
import type { StackEvent, StackEventBody } from '../../protocol/events.ts';
import type { SubagentInfo } from '../../protocol/missions.ts';
import { applyEvents, emptyView, visibleChat } from './events.ts';
import { HEAD_CHARS, TAIL_CHARS, outputText } from './tool-output.ts';

let seq = 0;
const USAGE = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: 0.000018 };
const ev = (body: StackEventBody): StackEvent => ({ ...body, seq: ++seq, at: 0 }) as StackEvent;

describe('applyEvents', () => {
  it('folds a mission into chat entries: user, streamed text, tool, error', () => {
    seq = 0;
    const events = [
      ev({ type: 'mission_queued', mission_id: 'm', request_id: 'r', kind: 'chat', text: 'hi', position: 0 }),
      ev({ type: 'mission_started', mission_id: 'm', request_id: 'r', kind: 'chat', text: 'hi' }),
      ev({ type: 'assistant_delta', mission_id: 'm', text: 'Hel' }),
      ev({ type: 'assistant_delta', mission_id: 'm', text: 'lo' }),
      ev({ type: 'assistant_message_end', mission_id: 'm', stop_reason: 'tool_use', usage: USAGE }),
      ev({ type: 'tool_started', mission_id: 'm', tool_use_id: 't1', name: 'create_window', title: 'Opening' }),
      ev({ type: 'tool_finished', mission_id: 'm', tool_use_id: 't1', name: 'create_window', ok: true, summary: 'done' }),
      ev({ type: 'mission_finished', mission_id: 'm', status: 'failed', usage: USAGE, error: { code: 'model_error', message: 'boom' } }),
    ];
    const view = applyEvents(emptyView, events);
    expect(view.lastSeq).toBe(8);
    expect(view.activeMissions).toEqual([]);
    expect(view.chat.map((entry) => entry.kind)).toEqual(['user', 'assistant', 'tool', 'error', 'usage']);
    expect(view.chat[3]).toMatchObject({ retry_text: 'hi' });
    expect(view.chat[4]).toMatchObject({ tokens: 2, cost_usd: 0.000018 });
    expect(view.session).toEqual({ tokens: 2, cost_usd: 0.000018 });
    expect(view.chat[1]).toMatchObject({ text: 'Hello', streaming: false });
    expect(view.chat[2]).toMatchObject({ status: 'ok', summary: 'done' });
    expect(view.chat[3]).toMatchObject({ code: 'model_error', text: 'boom' });
  });

  it('labels the recorded demo: its request and replies are marked, its state kept for the banner, and no Retry sends it to a model', () => {
    seq = 0;
    const ZERO = { ...USAGE, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
    const playing = applyEvents(emptyView, [
      ev({ type: 'mission_queued', mission_id: 'd', request_id: 'r', kind: 'demo', text: 'Extract these', position: 0 }),
      ev({ type: 'mission_started', mission_id: 'd', request_id: 'r', kind: 'demo', text: 'Extract these' }),
      ev({ type: 'assistant_delta', mission_id: 'd', text: 'Reading' }),
    ]);
    expect(playing.demo).toEqual({ mission_id: 'd', state: 'playing' });
    expect(playing.chat.map((entry) => [entry.kind, 'recorded' in entry && entry.recorded])).toEqual([
      ['user', true],
      ['assistant', true],
    ]);
    const failed = applyEvents(playing, [ev({ type: 'mission_finished', mission_id: 'd', status: 'failed', usage: ZERO, error: { code: 'demo_off_script', message: 'The recorded demo stopped: x' } })]);
    expect(failed.demo).toEqual({ mission_id: 'd', state: 'failed' });
    expect(failed.chat.at(-1)).toMatchObject({ kind: 'error', code: 'demo_off_script' });
    expect(failed.chat.at(-1)).not.toHaveProperty('retry_text');
    // A real message afterwards is the user's, not recorded; the banner's demo stays until closed.
    const after = applyEvents(failed, [
      ev({ type: 'mission_queued', mission_id: 'm', request_id: 'r2', kind: 'chat', text: 'hi', position: 0 }),
      ev({ type: 'assistant_delta', mission_id: 'm', text: 'Hello' }),
    ]);
    expect(after.chat.slice(-2).every((entry) => !('recorded' in entry))).toBe(true);
    expect(after.demo?.state).toBe('failed');
  });

  it('keeps a heartbeat out of sight until it does something, and out of the chat when it ends with HEARTBEAT_OK', () => {
    seq = 0;
    const beat = (id: string, reply: string, tool = false) => [
      ev({ type: 'mission_queued', mission_id: id, request_id: id, kind: 'heartbeat', text: 'beat', position: 0 }),
      ev({ type: 'mission_started', mission_id: id, request_id: id, kind: 'heartbeat', text: 'beat' }),
      ...(tool ? [ev({ type: 'tool_started', mission_id: id, tool_use_id: `${id}-t`, name: 'read', title: 'Reading' }), ev({ type: 'tool_finished', mission_id: id, tool_use_id: `${id}-t`, name: 'read', ok: true, summary: 'ok' })] : []),
      ...reply.match(/.{1,5}/g)!.map((text) => ev({ type: 'assistant_delta', mission_id: id, text })),
      ev({ type: 'assistant_message_end', mission_id: id, stop_reason: 'end_turn', usage: USAGE }),
      ev({ type: 'mission_finished', mission_id: id, status: 'completed', usage: USAGE }),
    ];
    const ok = beat('hb1', 'HEARTBEAT_OK');
    // While it streams "HEART...": nothing shows.
    const midway = applyEvents(emptyView, ok.slice(0, 4));
    expect(visibleChat(midway.chat, midway.quietBeats)).toEqual([]);
    const quiet = applyEvents(emptyView, ok);
    expect(quiet.chat).toEqual([]);
    expect(quiet.quietBeats).toEqual([]);
    expect(quiet.session.tokens).toBe(2);

    const said = applyEvents(quiet, beat('hb2', 'The Acme invoice is due tomorrow.'));
    expect(visibleChat(said.chat, said.quietBeats).map((entry) => entry.kind)).toEqual(['notice', 'assistant', 'usage']);
    const worked = applyEvents(said, beat('hb3', 'HEARTBEAT_OK', true));
    expect(visibleChat(worked.chat, worked.quietBeats).filter((entry) => entry.mission_id === 'hb3').map((entry) => entry.kind)).toEqual(['notice', 'tool', 'assistant', 'usage']);
  });

  it('ignores events it has already applied', () => {
    seq = 0;
    const opened = ev({ type: 'window_opened', window: { id: 'w', kind: 'notes', title: 't', content: '', created_at: 0, updated_at: 0 } });
    const once = applyEvents(emptyView, [opened]);
    expect(applyEvents(once, [opened])).toBe(once);
    const closed = applyEvents(once, [ev({ type: 'window_closed', window_id: 'w' })]);
    expect(closed.windows).toEqual([]);
  });

  it('marks each checkpoint taken (the timeline reads again) and says in the chat when one could not be taken', () => {
    seq = 0;
    const changes = { added: [], removed: [], changed: [], counts: { added: 0, removed: 0, changed: 0 }, computer: false, databases: true };
    const view = applyEvents(emptyView, [
      ev({ type: 'mission_started', mission_id: 'm', request_id: 'r', kind: 'chat', text: 'tidy up' }),
      ev({ type: 'checkpoint_taken', checkpoint: { id: 'c-1-abcdef', created_at: 1, reason: 'mission', label: 'tidy up', changes, added_bytes: 10, total_bytes: 20 } }),
    ]);
    expect(view.checkpointSeq).toBe(2);
    const failed = applyEvents(view, [ev({ type: 'checkpoint_failed', mission_id: 'm', error: { code: 'storage', message: "the browser's storage is full" } })]);
    expect(failed.chat.at(-1)).toMatchObject({ kind: 'notice', mission_id: 'm', text: "No checkpoint was taken before this: the browser's storage is full" });
    expect(failed.checkpointSeq).toBe(2);
    // The worker's storage-full message says what was not done itself: not said twice.
    const full = "No checkpoint was taken before this: the browser's storage for Stackdocs is full.";
    const again = applyEvents(failed, [ev({ type: 'checkpoint_failed', mission_id: 'm', error: { code: 'storage', message: full } })]);
    expect(again.chat.at(-1)).toMatchObject({ kind: 'notice', text: full });
    // One the user asked for (no mission) is said by the timeline that asked: the chat stays as it is.
    expect(applyEvents(again, [ev({ type: 'checkpoint_failed', mission_id: null, error: { code: 'internal', message: 'x' } })]).chat).toEqual(again.chat);
  });

  it('shows a queued mission until it starts', () => {
    seq = 0;
    const queued = applyEvents(emptyView, [
      ev({ type: 'mission_queued', mission_id: 'a', request_id: 'r1', kind: 'chat', text: 'first', position: 0 }),
      ev({ type: 'mission_queued', mission_id: 'b', request_id: 'r2', kind: 'chat', text: 'second', position: 1 }),
    ]);
    expect(queued.chat.map((e) => e.kind === 'user' && e.queued)).toEqual([false, true]);
    expect(queued.activeMissions).toEqual(['a', 'b']);
    const started = applyEvents(queued, [ev({ type: 'mission_started', mission_id: 'b', request_id: 'r2', kind: 'chat', text: 'second' })]);
    expect(started.chat.map((e) => e.kind === 'user' && e.queued)).toEqual([false, false]);
  });

  it('a queued mission stopped before its turn is no longer shown as queued', () => {
    seq = 0;
    const view = applyEvents(emptyView, [
      ev({ type: 'mission_queued', mission_id: 'a', request_id: 'r1', kind: 'chat', text: 'first', position: 0 }),
      ev({ type: 'mission_queued', mission_id: 'b', request_id: 'r2', kind: 'chat', text: 'second', position: 1 }),
      ev({ type: 'mission_finished', mission_id: 'b', status: 'aborted', usage: { ...USAGE, input_tokens: 0, output_tokens: 0 } }),
    ]);
    expect(view.chat.filter((e) => e.kind === 'user').map((e) => e.kind === 'user' && e.queued)).toEqual([false, false]);
    expect(view.chat.at(-1)).toMatchObject({ kind: 'notice', text: 'Stopped.' });
    expect(view.activeMissions).toEqual(['a']);
  });

  it('counts a running mission\'s spend per model reply, then the finished total once', () => {
    seq = 0;
    const running = applyEvents(emptyView, [
      ev({ type: 'mission_queued', mission_id: 'm', request_id: 'r', kind: 'chat', text: 'hi', position: 0 }),
      ev({ type: 'assistant_message_end', mission_id: 'm', stop_reason: 'tool_use', usage: USAGE }),
      ev({ type: 'assistant_message_end', mission_id: 'm', stop_reason: 'end_turn', usage: { ...USAGE, cost_usd: null } }),
    ]);
    expect(running.live).toEqual({ m: { tokens: 4, cost_usd: null } });
    expect(running.session).toEqual({ tokens: 0, cost_usd: 0 });
    const done = applyEvents(running, [ev({ type: 'mission_finished', mission_id: 'm', status: 'completed', usage: { ...USAGE, input_tokens: 2, output_tokens: 2 } })]);
    expect(done.live).toEqual({});
    expect(done.session).toEqual({ tokens: 4, cost_usd: 0.000018 });
  });

  it('times each tool call from the events\' clocks', () => {
    seq = 0;
    const view = applyEvents(emptyView, [
      { ...ev({ type: 'tool_started', mission_id: 'm', tool_use_id: 't', name: 'bash', title: 'Running ls' }), at: 1_000 },
      { ...ev({ type: 'tool_finished', mission_id: 'm', tool_use_id: 't', name: 'bash', ok: false, summary: 'exit 2' }), at: 2_500 },
    ] as StackEvent[]);
    expect(view.chat[0]).toMatchObject({ kind: 'tool', status: 'error', summary: 'exit 2', duration_ms: 1_500 });
  });

  it('a reply reads on in one piece above a message queued behind it', () => {
    seq = 0;
    const view = applyEvents(emptyView, [
      ev({ type: 'mission_queued', mission_id: 'a', request_id: 'r1', kind: 'chat', text: 'first', position: 0 }),
      ev({ type: 'assistant_delta', mission_id: 'a', text: 'One ' }),
      ev({ type: 'mission_queued', mission_id: 'b', request_id: 'r2', kind: 'chat', text: 'second', position: 1 }),
      ev({ type: 'assistant_delta', mission_id: 'a', text: 'two.' }),
      ev({ type: 'tool_started', mission_id: 'a', tool_use_id: 't', name: 'bash', title: 'Running' }),
      ev({ type: 'mission_finished', mission_id: 'a', status: 'completed', usage: USAGE }),
      ev({ type: 'mission_started', mission_id: 'b', request_id: 'r2', kind: 'chat', text: 'second' }),
      ev({ type: 'assistant_delta', mission_id: 'b', text: 'Three.' }),
    ]);
    expect(view.chat.map((e) => [e.kind, e.mission_id, 'text' in e ? e.text : ''])).toEqual([
      ['user', 'a', 'first'],
      ['assistant', 'a', 'One two.'],
      ['tool', 'a', ''],
      ['usage', 'a', ''],
      ['user', 'b', 'second'],
      ['assistant', 'b', 'Three.'],
    ]);
  });

  it('keeps what a tool was given, what it printed as it ran, and the full result', () => {
    seq = 0;
    const view = applyEvents(emptyView, [
      ev({ type: 'tool_started', mission_id: 'm', tool_use_id: 't', name: 'bash', title: 'Running make', detail: 'make all' }),
      ev({ type: 'tool_output', mission_id: 'm', tool_use_id: 't', stream: 'stdout', text: 'cc -c a.c\n' }),
      ev({ type: 'tool_output', mission_id: 'm', tool_use_id: 'other', stream: 'stdout', text: 'not mine' }),
      ev({ type: 'tool_output', mission_id: 'm', tool_use_id: 't', stream: 'stderr', text: 'warning: x\n' }),
      ev({ type: 'tool_finished', mission_id: 'm', tool_use_id: 't', name: 'bash', ok: true, summary: 'exit 0', output: 'cc -c a.c\nwarning: x\n' }),
    ]);
    expect(view.chat).toHaveLength(1);
    const tool = view.chat[0]!;
    expect(tool).toMatchObject({ kind: 'tool', detail: 'make all', summary: 'exit 0', result: 'cc -c a.c\nwarning: x\n' });
    expect(tool.kind === 'tool' && outputText(tool.output)).toBe('cc -c a.c\nwarning: x\n');
  });

  it('a tool that prints for long keeps its first lines and its newest output', () => {
    seq = 0;
    const line = (i: number) => `line ${String(i).padStart(6, '0')}\n`;
    const events = [ev({ type: 'tool_started', mission_id: 'm', tool_use_id: 't', name: 'bash', title: 'Counting' })];
    for (let chunk = 0; chunk < 100; chunk++) {
      const text = Array.from({ length: 100 }, (_, i) => line(chunk * 100 + i)).join('');
      events.push(ev({ type: 'tool_output', mission_id: 'm', tool_use_id: 't', stream: 'stdout', text }));
    }
    const tool = applyEvents(emptyView, events).chat[0]!;
    if (tool.kind !== 'tool') throw new Error('not a tool entry');
    expect(tool.output.head.length + tool.output.tail.length).toBeLessThanOrEqual(HEAD_CHARS + TAIL_CHARS);
    expect(tool.output.head.startsWith(line(0))).toBe(true);
    expect(tool.output.tail.endsWith(line(9_999))).toBe(true);
    expect(tool.output.tail.startsWith('line ')).toBe(true);
    expect(outputText(tool.output)).toMatch(/\n… \d+ KB not shown …\n/);
  });

  it('follows the computer: from the snapshot, then its status events, skipping replayed older ones', () => {
    seq = 0;
    const booting = ev({ type: 'computer_status', status: { state: 'booting', detail: 'kernel' } });
    const ready = ev({ type: 'computer_status', status: { state: 'ready', woke: true, wake_ms: 640 } });
    expect(emptyView.computer).toBeNull();
    // The snapshot (at seq 1) already says ready; the replayed boot at seq 1 must not undo it.
    const fromSnapshot = { ...emptyView, snapshotSeq: 1, computer: { state: 'ready' as const, woke: true, wake_ms: 640 } };
    expect(applyEvents(fromSnapshot, [booting]).computer).toEqual({ state: 'ready', woke: true, wake_ms: 640 });
    const later = applyEvents(applyEvents(fromSnapshot, [booting, ready]), [ev({ type: 'computer_status', status: { state: 'error', message: 'boom', can_reboot: true } })]);
    expect(later.computer).toEqual({ state: 'error', message: 'boom', can_reboot: true });
  });
});

describe('subagents', () => {
  const info = (change: Partial<SubagentInfo> = {}): SubagentInfo => ({
    id: 'sub_1', mission_id: 'm', tool_use_id: 't1', description: 'Totals', prompt: 'add up', tools: ['read'], status: 'running', activity: 'Thinking',
    usage: { ...USAGE, input_tokens: 0, output_tokens: 0, cost_usd: 0 }, tool_calls: 0, started_at: 5, finished_at: null, result: null, error: null, ...change,
  });

  it('fold into the board with their transcript; their spend joins the running mission once, and a mission that ends ends them', () => {
    seq = 0;
    const view = applyEvents(emptyView, [
      ev({ type: 'mission_queued', mission_id: 'm', request_id: 'r', kind: 'chat', text: 'go', position: 0 }),
      ev({ type: 'subagent_changed', subagent: info({ status: 'waiting' }) }),
      ev({ type: 'subagent_changed', subagent: info({ usage: { ...USAGE, input_tokens: 10, output_tokens: 5, cost_usd: 0.001 } }) }),
      ev({ type: 'subagent_step', mission_id: 'm', subagent_id: 'sub_1', step: { kind: 'tool', tool_use_id: 'x', name: 'read', title: 'Reading a.txt', status: 'running', summary: '' } }),
      ev({ type: 'subagent_step', mission_id: 'm', subagent_id: 'sub_1', step: { kind: 'tool', tool_use_id: 'x', name: 'read', title: 'Reading a.txt', status: 'ok', summary: 'hello' } }),
      ev({ type: 'subagent_changed', subagent: info({ tool_calls: 1, activity: 'Reading a.txt', usage: { ...USAGE, input_tokens: 20, output_tokens: 10, cost_usd: 0.002 } }) }),
      ev({ type: 'subagent_step', mission_id: 'm', subagent_id: 'sub_1', step: { kind: 'text', text: 'Total 42' } }),
    ]);
    expect(view.subagents['sub_1']!.steps).toEqual([
      { kind: 'tool', tool_use_id: 'x', name: 'read', title: 'Reading a.txt', status: 'ok', summary: 'hello' },
      { kind: 'text', text: 'Total 42' },
    ]);
    expect(view.subagents['sub_1']!.info).toMatchObject({ tool_calls: 1, activity: 'Reading a.txt' });
    expect(view.live['m']!.tokens).toBe(30);
    expect(view.live['m']!.cost_usd).toBeCloseTo(0.002);
    const ended = applyEvents(view, [ev({ type: 'mission_finished', mission_id: 'm', status: 'interrupted', usage: USAGE, error: { code: 'interrupted', message: 'Interrupted.' } })]);
    expect(ended.subagents['sub_1']!.info).toMatchObject({ status: 'cancelled', error: 'Its mission ended first.', finished_at: 0 });
    expect(ended.live).toEqual({});
  });
});

describe('document states', () => {
  it('follow each document from added through its pages to read or failed, by path', () => {
    const doc = { id: 'd1', filename: 'a.pdf', path: 'documents/a.pdf', mime: 'application/pdf', size: 10, status: 'uploaded', description: 'PDF', page_count: null, error: null };
    let view = applyEvents(emptyView, [ev({ type: 'document_added', document: doc }), ev({ type: 'document_progress', document_id: 'd1', page: 2, pages: 3 })]);
    expect(view.documents['documents/a.pdf']).toEqual({ id: 'd1', status: 'uploaded', error: null, progress: { page: 2, pages: 3 } });
    view = applyEvents(view, [ev({ type: 'document_updated', document: { ...doc, status: 'failed', error: 'a.pdf is password-protected' } })]);
    expect(view.documents['documents/a.pdf']).toEqual({ id: 'd1', status: 'failed', error: 'a.pdf is password-protected' });
  });
});
