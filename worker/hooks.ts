// Hooks: commands the user sets to run in the stack's computer at points of the agent's work —
// before and after a tool call, when the user sends a message, when a mission is about to stop.
// Each gets the event as JSON on stdin and a time limit. The file's shape is the one users know
// from other agents (`{"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type":
// "command", "command": "...", "timeout": 10}]}]}}`), kept in `.os/config/hooks.json`.
//
// Exit codes: 0 lets the work go on (a prompt hook's output is added to the message); 2 blocks
// (the hook's stderr is the reason the model or the user reads); anything else is a hook that
// failed, shown in the transcript and otherwise ignored. A before-tool hook that cannot decide —
// killed at its time limit, or no computer to run it — blocks the call: a guard that did not run
// must not let through what it guards. Hooks can only block or add words; nothing they print
// widens the permission rules, which every call still passes after them.
import { compileLinear, type LinearRegex } from './permissions/linear-regex.ts';
import { z } from 'zod';
import type { ExecRequest, VmExecResult } from '../vm/protocol.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { HookEvent, HookRun, HooksInfo } from '../protocol/hooks.ts';
import type { StackStorage } from '../storage/json-files.ts';
import { configPath } from './config-path.ts';

export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop'] as const satisfies readonly HookEvent[];
export const DEFAULT_HOOK_TIMEOUT_S = 60;
const FILE = 'hooks.json';
/** What one run keeps of its output for the transcript and the model. */
const OUTPUT_CHARS = 4_000;
/** Tool events match a tool's name; the others apply to every message or stop. */
const TOOL_EVENTS = new Set<HookEvent>(['PreToolUse', 'PostToolUse']);

const commandSchema = z
  .object({
    type: z.literal('command', { error: 'a hook\'s "type" must be "command"' }).default('command'),
    command: z.string().trim().min(1, 'a hook needs a "command"').max(10_000),
    timeout: z.number().int().min(1).max(600, 'a hook\'s "timeout" is at most 600 seconds').optional(),
  })
  .strict();

const groupSchema = z
  .object({
    matcher: z
      .string()
      .max(500)
      .optional()
      .refine((matcher) => matcher === undefined || compiles(matcher), { message: 'the "matcher" is not a regular expression a hook may use (valid, with no backreference or lookaround, at most 500 characters)' }),
    hooks: z.array(commandSchema).min(1, 'a group needs at least one hook in "hooks"').max(20),
  })
  .strict();

const fileSchema = z
  .object({
    hooks: z
      .object(Object.fromEntries(HOOK_EVENTS.map((event) => [event, z.array(groupSchema).max(50).optional()])) as Record<HookEvent, z.ZodOptional<z.ZodArray<typeof groupSchema>>>)
      .strict(),
  })
  .strict()
  .superRefine((file, context) => {
    for (const event of ['UserPromptSubmit', 'Stop'] as const) {
      file.hooks[event]?.forEach((group, i) => {
        if (group.matcher !== undefined) context.addIssue({ code: 'custom', path: ['hooks', event, i, 'matcher'], message: `${event} hooks apply to every ${event === 'Stop' ? 'stop' : 'message'} and take no "matcher"` });
      });
    }
  });

export type HooksFile = z.infer<typeof fileSchema>;

export class HooksError extends Error {
  override readonly name = 'HooksError';
}

/** Parses and checks the hooks file's text; throws HooksError naming what is wrong and where. */
export function parseHooks(text: string): HooksFile {
  if (!text.trim()) return { hooks: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new HooksError(`The hooks are not valid JSON: ${error instanceof Error ? error.message : String(error)}.`);
  }
  const parsed = fileSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = configPath(issue.path);
  const message = issue.code === 'unrecognized_keys' ? `unknown ${issue.keys.length === 1 ? 'key' : 'keys'} ${issue.keys.map((key) => `"${key}"`).join(', ')}${where === 'hooks' ? ` (the events are ${HOOK_EVENTS.join(', ')})` : ''}` : issue.message;
  throw new HooksError(`The hooks are not valid: ${where}: ${message}.`);
}

function compiles(pattern: string): boolean {
  try {
    matcherOf(pattern);
    return true;
  } catch {
    return false;
  }
}

/**
 * A matcher runs on every tool call, against names an MCP server chooses: on the rules' linear-time
 * engine, as V8's backtracking one takes exponential time on patterns like `(a+)+`.
 */
const matchers = new Map<string, LinearRegex>();
function matcherOf(pattern: string): LinearRegex {
  let compiled = matchers.get(pattern);
  if (!compiled) {
    compiled = compileLinear(`^(?:${pattern})$`);
    if (matchers.size > 1000) matchers.clear();
    matchers.set(pattern, compiled);
  }
  return compiled;
}

/** Whether a group applies to a tool: no matcher, "" or "*" for all, else a regex on the whole name. */
export function matches(matcher: string | undefined, tool: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  return matcherOf(matcher).test(tool);
}

export interface HooksDeps {
  storage: StackStorage;
  /** Runs a command in the computer; throws (with a message for the user) when there is none or it cannot start. */
  exec(request: ExecRequest, signal: AbortSignal): Promise<VmExecResult>;
  emit(event: StackEventBody): void;
}

/** Where a hook runs for: the mission, and for tool events the call. */
export interface HookContext {
  mission_id: string;
  tool_use_id?: string;
  tool_name?: string;
}

/** What the hooks of one event decided. `block`: the reason (the call, message or stop does not happen). */
export interface HookVerdict {
  block: string | null;
  /** Output to add: a prompt hook's stdout (exit 0), or an after-tool hook's stderr (exit 2). */
  context: string;
}

const NONE: HookVerdict = { block: null, context: '' };

export interface Hooks {
  info(): HooksInfo;
  /** Checks and stores new hooks (the text the user edited); throws HooksError when invalid. */
  save(text: string): Promise<HooksInfo>;
  /** Whether any hook applies, so a call with none costs nothing. */
  any(event: HookEvent, tool?: string): boolean;
  /** Runs the event's hooks in order (a block stops the rest) and reports each as `hook_ran`. Never throws. */
  run(event: HookEvent, input: Record<string, unknown>, context: HookContext, signal: AbortSignal): Promise<HookVerdict>;
}

export async function loadHooks(deps: HooksDeps): Promise<Hooks> {
  let file: HooksFile = { hooks: {} };
  let problem: string | null = null;
  const stored = await deps.storage.readJson<unknown>(FILE);
  if (stored !== undefined) {
    try {
      file = parseHooks(JSON.stringify(stored));
    } catch (error) {
      // Kept as the user wrote it, shown in Settings with what is wrong; none of it runs.
      problem = error instanceof Error ? error.message : String(error);
    }
  }
  let text = stored === undefined ? '' : JSON.stringify(stored, null, 2);

  const groups = (event: HookEvent, tool?: string) => (problem ? [] : (file.hooks[event] ?? []).filter((group) => !TOOL_EVENTS.has(event) || matches(group.matcher, tool ?? '')));

  const info = (): HooksInfo => ({
    text,
    error: problem,
    hooks: problem
      ? []
      : HOOK_EVENTS.flatMap((event) =>
          (file.hooks[event] ?? []).flatMap((group) =>
            group.hooks.map((hook) => ({ event, ...(group.matcher !== undefined ? { matcher: group.matcher } : {}), command: hook.command, timeout: hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S })),
          ),
        ),
  });

  async function runOne(event: HookEvent, command: string, timeout: number, stdin: string, signal: AbortSignal): Promise<HookRun> {
    const started = Date.now();
    let result: VmExecResult;
    try {
      result = await deps.exec({ command, input: stdin, cwd: '/workspace', timeout, env: { STACKDOCS_HOOK_EVENT: event } }, signal);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { event, command, outcome: 'unavailable', exit_code: null, duration_ms: Date.now() - started, stdout: '', stderr: `The hook could not run: ${message}` };
    }
    const outcome: HookRun['outcome'] = result.timedOut ? 'timed_out' : result.cancelled ? 'cancelled' : result.code === 0 ? 'ok' : result.code === 2 ? 'blocked' : 'failed';
    const stderr = result.timedOut ? `${cap(result.stderr ?? '')}\nKilled after its time limit (${timeout} s).`.trim() : cap(result.stderr ?? '');
    return { event, command, outcome, exit_code: result.code, duration_ms: result.durationMs ?? Date.now() - started, stdout: cap(result.stdout ?? ''), stderr };
  }

  return {
    info,
    async save(next) {
      const parsed = parseHooks(next);
      const value = next.trim() ? (JSON.parse(next) as unknown) : { hooks: {} };
      await deps.storage.writeJson(FILE, value);
      file = parsed;
      problem = null;
      text = JSON.stringify(value, null, 2);
      return info();
    },
    any(event, tool) {
      return groups(event, tool).length > 0;
    },
    async run(event, input, context, signal) {
      const selected = groups(event, context.tool_name);
      if (selected.length === 0) return NONE;
      const stdin = JSON.stringify({ hook_event_name: event, mission_id: context.mission_id, cwd: '/workspace', ...input });
      const added: string[] = [];
      for (const group of selected) {
        for (const hook of group.hooks) {
          if (signal.aborted) return { block: 'The mission was stopped.', context: '' };
          const timeout = hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S;
          const run = await runOne(event, hook.command, timeout, stdin, signal);
          deps.emit({ type: 'hook_ran', mission_id: context.mission_id, ...(context.tool_use_id ? { tool_use_id: context.tool_use_id } : {}), ...(context.tool_name ? { tool: context.tool_name } : {}), run });
          const said = run.stderr.trim() || run.stdout.trim();
          if (run.outcome === 'blocked') {
            if (event === 'PostToolUse') {
              // The call already ran: its hook's words go to the model beside the result.
              added.push(said || `The hook \`${hook.command}\` objected (exit 2) without saying why.`);
              continue;
            }
            return { block: said || `The hook \`${hook.command}\` blocked it (exit 2) without saying why.`, context: '' };
          }
          if (event === 'PreToolUse' && (run.outcome === 'timed_out' || run.outcome === 'unavailable')) {
            const why = run.outcome === 'timed_out' ? `did not finish within its ${timeout} s` : run.stderr;
            return { block: `The before-tool hook \`${hook.command}\` could not decide (${why.replace(/\.$/, '')}), so the call was not run.`, context: '' };
          }
          if (event === 'UserPromptSubmit' && run.outcome === 'ok' && run.stdout.trim()) added.push(run.stdout.trim());
        }
      }
      return { block: null, context: added.join('\n\n') };
    },
  };
}

function cap(text: string): string {
  return text.length > OUTPUT_CHARS ? `${text.slice(0, OUTPUT_CHARS)}\n[... ${text.length - OUTPUT_CHARS} characters cut]` : text;
}
