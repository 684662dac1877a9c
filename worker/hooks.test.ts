// The user's hooks, through a real stack with a scripted model and a stand-in computer: a guard
// that blocks a command, an after-write hook whose words stay in the transcript, a hook that
// hangs, a prompt hook that stops a message or adds to it, a stop hook that sends the agent back.
import { describe, expect, it } from 'vitest';
import { openTestMemory } from '../memory/test-helpers.ts';
import type { ExecRequest, VmExecResult } from '../vm/protocol.ts';
import type { ModelRequest, StreamFn } from './agent/types.ts';
import { HooksError, matches, parseHooks } from './hooks.ts';
import type { StackEvent } from '../protocol/events.ts';
import type { Method, ParamsOf, ResultOf, StackApi } from '../protocol/stack-api.ts';
import { createStack } from './stack.ts';
import { createMemoryStorage, type StackStorage } from '../storage/json-files.ts';
import { modelMessage, testComputer, testStackDeps } from './test-stack.ts';

const healthy = (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch;

const message = modelMessage;

/** A model that plays `turns` in order and records what it was sent. */
function scripted(turns: unknown[][]) {
  const requests: ModelRequest[] = [];
  const stream: StreamFn = async function* (request) {
    requests.push(structuredClone(request));
    const turn = turns[requests.length - 1];
    if (!turn) throw new Error(`the script has no turn ${requests.length}`);
    yield message(turn);
  };
  return { stream, requests };
}

/** The computer: hooks by name (`guard`, `lint`, `hang`, ...), anything else as a command that ran. */
function computer(hooks: Record<string, (input: Record<string, unknown>) => Partial<VmExecResult>>) {
  const ran: ExecRequest[] = [];
  const exec = async (request: ExecRequest): Promise<Partial<VmExecResult>> => {
    ran.push(request);
    const hook = hooks[request.command ?? ''];
    if (!hook) return { stdout: `ran ${request.command}` };
    return hook(JSON.parse(String(request.input)) as Record<string, unknown>);
  };
  return { computer: testComputer(exec), ran };
}

async function openStack(stream: StreamFn, hooks: Parameters<typeof computer>[0], storage: StackStorage = createMemoryStorage()) {
  const vm = computer(hooks);
  const stack = await createStack(testStackDeps(await openTestMemory(), { storage, fetch: healthy, createStream: () => stream, createComputer: () => vm.computer }));
  const events: StackEvent[] = [];
  await stack.subscribe(0, (batch) => events.push(...batch));
  return { stack, events, ran: vm.ran };
}

async function call<M extends Method>(stack: StackApi, method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  const response = await stack.request({ id: `r-${Math.random()}`, method, params } as never);
  if (!response.ok) throw new Error(response.error.message);
  return response.result as ResultOf<M>;
}

async function finished(events: StackEvent[]) {
  for (let i = 0; i < 400; i++) {
    const done = events.find((e) => e.type === 'mission_finished');
    if (done) return done;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the mission did not finish; got ${events.map((e) => e.type).join(', ')}`);
}

const hookRuns = (events: StackEvent[]) => events.flatMap((e) => (e.type === 'hook_ran' ? [{ event: e.run.event, tool: e.tool, outcome: e.run.outcome }] : []));
const toolResults = (request: ModelRequest | undefined) =>
  (request?.messages.at(-1)?.content as { type: string; content?: string }[]).filter((block) => block.type === 'tool_result').map((block) => block.content);

const HOOKS = JSON.stringify({
  hooks: {
    PreToolUse: [
      { matcher: 'bash', hooks: [{ type: 'command', command: 'guard', timeout: 5 }] },
      { matcher: 'glob|grep', hooks: [{ type: 'command', command: 'hang', timeout: 2 }] },
    ],
    PostToolUse: [{ matcher: 'write', hooks: [{ command: 'lint' }] }],
  },
});

describe('hooks', () => {
  it('checks the file and says what is wrong and where', () => {
    expect(parseHooks('')).toEqual({ hooks: {} });
    expect(parseHooks(HOOKS).hooks.PreToolUse).toHaveLength(2);
    expect(() => parseHooks('{"hooks": ')).toThrow(/not valid JSON/);
    expect(() => parseHooks('{"hooks": {"BeforeTool": []}}')).toThrow(/hooks: unknown key "BeforeTool" \(the events are PreToolUse, PostToolUse, UserPromptSubmit, Stop\)/);
    expect(() => parseHooks('{"hooks": {"Stop": [{"matcher": "x", "hooks": [{"command": "c"}]}]}}')).toThrow(/hooks.Stop\[0\].matcher: Stop hooks apply to every stop and take no "matcher"/);
    expect(() => parseHooks('{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "c"}]}]}}')).toThrow(/not a regular expression a hook may use/);
    expect(() => parseHooks('{"hooks": {"PreToolUse": [{"matcher": "(bash)\\\\1", "hooks": [{"command": "c"}]}]}}')).toThrow(/not a regular expression a hook may use/);
    expect(() => parseHooks('{"hooks": {"PreToolUse": [{"hooks": [{"command": "c", "timeout": 3600}]}]}}')).toThrow(/at most 600 seconds/);
    expect(() => parseHooks('{"hooks": {"PreToolUse": [{"hooks": [{"command": "  "}]}]}}')).toThrow(HooksError);
  });

  it('matches tool names whole: a name, alternatives, or everything', () => {
    expect(matches('bash', 'bash')).toBe(true);
    expect(matches('bash', 'bash2')).toBe(false);
    expect(matches('write|edit', 'edit')).toBe(true);
    expect(matches('*', 'web_fetch')).toBe(true);
    expect(matches(undefined, 'read')).toBe(true);
    expect(matches('mcp__.*', 'mcp__files__list')).toBe(true);
  });

  it('matches in time that grows with the name only: a matcher like (a+)+ cannot stall every tool call', () => {
    const started = performance.now();
    // On V8's backtracking engine this takes about 2^40 steps.
    expect(matches('(a+)+', `${'a'.repeat(40)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('blocks a call with the hook\'s reason, keeps an after-call hook\'s output, and blocks a call whose hook hangs', async () => {
    const model = scripted([
      [{ type: 'tool_use', id: 't1', name: 'bash', input: { command: 'rm -rf /workspace/archive/2024' } }],
      [
        { type: 'tool_use', id: 't2', name: 'bash', input: { command: 'ls /workspace' } },
        { type: 'tool_use', id: 't3', name: 'write', input: { path: 'artifacts/notes.md', content: '# Notes\n' } },
      ],
      [{ type: 'tool_use', id: 't4', name: 'glob', input: { pattern: '**/*.md' } }],
      [{ type: 'text', text: 'Done.' }],
    ]);
    const { stack, events, ran } = await openStack(model.stream, {
      guard: (input) => {
        const command = String((input.tool_input as { command: string }).command);
        return /\brm\b.*\/workspace\/archive/.test(command) ? { code: 2, stderr: '/workspace/archive is read-only: nothing there may be removed.\n' } : { code: 0 };
      },
      lint: (input) => ({ stdout: `checked ${(input.tool_input as { path: string }).path}: ${(input.tool_response as { is_error: boolean }).is_error ? 'failed' : 'ok'}` }),
      hang: () => ({ code: null, signal: 'SIGKILL', timedOut: true, durationMs: 2000 }),
    });
    await call(stack, 'save_hooks', { text: HOOKS });
    await call(stack, 'mission', { text: 'tidy up the archive' });
    expect(await finished(events)).toMatchObject({ status: 'completed' });

    expect(toolResults(model.requests[1])).toEqual(['Not run. A hook blocked this call: /workspace/archive is read-only: nothing there may be removed.']);
    // The command the guard allowed ran; the blocked one never reached the computer.
    expect(ran.map((r) => r.command)).toEqual(['guard', 'guard', 'ls /workspace', 'lint', 'hang']);
    expect(toolResults(model.requests[2])![0]).toContain('ran ls /workspace');
    expect(toolResults(model.requests[2])![1]).not.toContain('A hook after this call said');
    expect(toolResults(model.requests[3])).toEqual(['Not run. A hook blocked this call: The before-tool hook `hang` could not decide (did not finish within its 2 s), so the call was not run.']);
    expect(hookRuns(events)).toEqual([
      { event: 'PreToolUse', tool: 'bash', outcome: 'blocked' },
      { event: 'PreToolUse', tool: 'bash', outcome: 'ok' },
      { event: 'PostToolUse', tool: 'write', outcome: 'ok' },
      { event: 'PreToolUse', tool: 'glob', outcome: 'timed_out' },
    ]);
    const lint = events.find((e) => e.type === 'hook_ran' && e.run.event === 'PostToolUse');
    expect(lint).toMatchObject({ tool_use_id: 't3', run: { command: 'lint', stdout: 'checked artifacts/notes.md: ok', exit_code: 0 } });
    const hang = events.find((e) => e.type === 'hook_ran' && e.run.outcome === 'timed_out');
    expect(hang).toMatchObject({ run: { stderr: 'Killed after its time limit (2 s).' } });

    // What each hook read on stdin: the event, the tool and its input (and after a call, its result).
    const [guard] = ran;
    expect(guard).toMatchObject({ cwd: '/workspace', timeout: 5, env: { STACKDOCS_HOOK_EVENT: 'PreToolUse' } });
    expect(JSON.parse(String(guard!.input))).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'bash', tool_input: { command: 'rm -rf /workspace/archive/2024' }, cwd: '/workspace' });
    expect(JSON.parse(String(ran[3]!.input))).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'write', tool_response: { is_error: false } });
    expect(ran[3]!.timeout).toBe(60);
  });

  it('gives the model an after-call hook\'s objection (exit 2) beside the result', async () => {
    const model = scripted([[{ type: 'tool_use', id: 't1', name: 'write', input: { path: 'artifacts/a.py', content: 'x=1\n' } }], [{ type: 'text', text: 'Fixed.' }]]);
    const { stack, events } = await openStack(model.stream, { lint: () => ({ code: 2, stderr: 'a.py:1: missing spaces around =' }) });
    await call(stack, 'save_hooks', { text: JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'write|edit', hooks: [{ command: 'lint' }] }] } }) });
    await call(stack, 'mission', { text: 'write a.py' });
    await finished(events);
    expect(toolResults(model.requests[1])![0]).toMatch(/^Wrote .*\n\nA hook after this call said: a\.py:1: missing spaces around =$/s);
  });

  it('stops a message a prompt hook refuses before the model reads it, and adds what an accepting one prints', async () => {
    const model = scripted([[{ type: 'text', text: 'Noted.' }]]);
    const { stack, events } = await openStack(model.stream, {
      screen: (input) => (String(input.prompt).includes('password') ? { code: 2, stderr: 'Do not paste passwords into the chat.' } : { code: 0, stdout: 'Today is a holiday: no deliveries.' }),
    });
    await call(stack, 'save_hooks', { text: JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ command: 'screen' }] }] } }) });
    await call(stack, 'mission', { text: 'my password is hunter2' });
    expect(await finished(events)).toMatchObject({ status: 'failed', error: { code: 'hook_blocked', message: 'A hook stopped this message before the agent read it: Do not paste passwords into the chat.' } });
    expect(model.requests).toHaveLength(0);

    events.length = 0;
    await call(stack, 'mission', { text: 'plan the deliveries at https://depot.example.com' });
    await finished(events);
    expect(model.requests).toHaveLength(1);
    const sent = model.requests[0]!.messages.at(-1)!.content as string;
    expect(sent).toContain('plan the deliveries');
    expect(sent).toContain('<hook_output>\nToday is a holiday: no deliveries.\n</hook_output>');
    // Only the refused message's words are not in the conversation.
    expect(JSON.stringify(model.requests[0]!.messages)).not.toContain('hunter2');
  });

  it('lets a stop hook send the agent back to work, telling it on the later stops that it already did', async () => {
    const model = scripted([[{ type: 'text', text: 'All done.' }], [{ type: 'text', text: 'Tests pass now.' }]]);
    const seen: unknown[] = [];
    const { stack, events } = await openStack(model.stream, {
      verify: (input) => {
        seen.push(input.stop_hook_active);
        return input.stop_hook_active ? { code: 0 } : { code: 2, stderr: 'The tests were not run: run them first.' };
      },
    });
    await call(stack, 'save_hooks', { text: JSON.stringify({ hooks: { Stop: [{ hooks: [{ command: 'verify' }] }] } }) });
    await call(stack, 'mission', { text: 'fix the bug' });
    const done = await finished(events);
    expect(done).toMatchObject({ status: 'completed', usage: { input_tokens: 6, output_tokens: 8 } });
    expect(seen).toEqual([false, true]);
    expect(model.requests[1]!.messages.at(-1)!.content).toBe('<hook_output>\nA stop hook asks you to go on before finishing: The tests were not run: run them first.\n</hook_output>');
  });

  it('refuses an invalid file with its reason, keeping the hooks in effect, and keeps saved hooks across a reopen', async () => {
    const storage = createMemoryStorage();
    const { stack } = await openStack(scripted([]).stream, {}, storage);
    expect(await call(stack, 'get_hooks', {})).toEqual({ text: '', error: null, hooks: [] });
    const saved = await call(stack, 'save_hooks', { text: HOOKS });
    expect(saved.hooks).toEqual([
      { event: 'PreToolUse', matcher: 'bash', command: 'guard', timeout: 5 },
      { event: 'PreToolUse', matcher: 'glob|grep', command: 'hang', timeout: 2 },
      { event: 'PostToolUse', matcher: 'write', command: 'lint', timeout: 60 },
    ]);
    const refused = await stack.request({ id: 'bad', method: 'save_hooks', params: { text: '{"hooks": {"PreToolUse": [{"hooks": []}]}}' } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'bad_request', message: 'The hooks are not valid: hooks.PreToolUse[0].hooks: a group needs at least one hook in "hooks".' } });

    const again = await openStack(scripted([]).stream, {}, storage);
    expect((await call(again.stack, 'get_hooks', {})).hooks).toHaveLength(3);
  });

  it('runs no hook for a call when none applies, and blocks a guarded call when there is no computer to run its hook', async () => {
    const model = scripted([[{ type: 'tool_use', id: 't1', name: 'write', input: { path: 'artifacts/x.txt', content: 'x' } }], [{ type: 'text', text: 'ok' }]]);
    const storage = createMemoryStorage();
    await storage.writeJson('hooks.json', { hooks: { PreToolUse: [{ matcher: 'write', hooks: [{ command: 'guard' }] }] } });
    const stack = await createStack(testStackDeps(await openTestMemory(), { storage, fetch: healthy, createStream: () => model.stream }));
    const events: StackEvent[] = [];
    await stack.subscribe(0, (batch) => events.push(...batch));
    await call(stack, 'mission', { text: 'write x' });
    await finished(events);
    expect(toolResults(model.requests[1])![0]).toBe('Not run. A hook blocked this call: The before-tool hook `guard` could not decide (The hook could not run: this stack has no computer to run hooks on), so the call was not run.');
  });
});
