// Missions: the user's messages, the agent's heartbeats and scheduled tasks' runs, one at a time behind one lock.
// Each runs the agent loop with the stack's tools, memory and permission gate, and reports
// everything it does as events.
import { applySummary, DEFAULT_POLICY, findCut, needsCompaction, summarise, transcriptOf, type CompactionPolicy } from './agent/compaction.ts';
import { toErrorShape } from './agent/errors.ts';
import { runAgentLoop } from './agent/loop.ts';
import { addUsage, emptyUsage } from './agent/pricing.ts';
import { systemPrompt } from './agent/system-prompt.ts';
import type { LoopOptions } from './agent/loop.ts';
import type { AgentTool, LoopEvent, MessageParam, StreamFn } from './agent/types.ts';
import type { AgentMemory } from './agent-memory.ts';
import type { Canvas } from './canvas.ts';
import { userHostsOf, withInteractions, withUserText, type Conversation } from './conversation.ts';
import { hostsNamedIn } from './permissions/rules.ts';
import { isAllClear } from './heartbeat.ts';
import type { Hooks } from './hooks.ts';
import type { PermissionGate } from './permissions/gate.ts';
import { assertNever, type ErrorShape } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import { tokensOf, type MissionKind, type MissionStatus, type MissionTask, type Usage } from '../protocol/missions.ts';
import { isStorageFull, storageFullMessage } from './storage-full.ts';
import { READ_ONLY_TOOLS, type Subagents } from './subagents.ts';
import { createTaskTool } from './tools/task.ts';

export interface MissionDeps {
  emit(event: StackEventBody): void;
  newId(prefix: string): string;
  tools: AgentTool[];
  /** Tools that come and go (the MCP servers'), asked at each mission's start. Must not throw. */
  moreTools?(): Promise<AgentTool[]>;
  canvas: Canvas;
  gate: PermissionGate;
  /** The user's hooks; absent in tests that have none. */
  hooks?: Hooks;
  memory: AgentMemory;
  conversation: Conversation;
  /** The model stream for the current settings. */
  stream(): Promise<StreamFn>;
  model(): string;
  /** The attachment index: one line per document. Never throws. */
  attachments(): Promise<string>;
  /** The skills' list for the system prompt (name: description); read at each mission's start. */
  skills?(): Promise<string>;
  maxRetries?: number;
  compaction?: CompactionPolicy;
  /** The `task` tool's subagents; absent, missions have no `task` tool. */
  subagents?: Subagents;
  /** Tokens a mission may use, its subagents' included; read at its start. 0: no limit. */
  budget?(): number;
  /**
   * Called once per mission before its first tool that may change the stack runs (a checkpoint
   * is taken there). Must not throw; the tool waits for it.
   */
  beforeChange?(mission: { mission_id: string; kind: MissionKind; text: string }): Promise<void>;
  /** After a mission that failed for lack of a model, the status is checked again. */
  onModelTrouble(): void;
  /**
   * The recorded demo: a new playing of its recording, and what must be done before it starts
   * (the sample documents read). Absent: a demo mission fails saying so.
   */
  demo?: { stream(): StreamFn; ready(): Promise<void> };
  /**
   * Hosts that a stack from elsewhere brought in its history, tasks or notes (worker/trust.ts):
   * they count as the user's only when the user names them in a message of their own.
   */
  heldHosts?(): ReadonlySet<string>;
}

/** Tools that only read (or only ask): no checkpoint is taken before them. */
const UNCHANGING_TOOLS = new Set<string>([...READ_ONLY_TOOLS, 'list_checkpoints']);

/** How many times a stop hook may send the agent back to work in one mission. */
export const MAX_STOP_HOOK_RETURNS = 3;

export interface MissionOptions {
  /** A scheduled task's run: named on the mission's events. */
  task?: MissionTask;
  /** Told how the mission ended. */
  onFinished?(outcome: { status: MissionStatus; error?: ErrorShape }): void;
}

export interface Missions {
  /** Queues a mission and returns its id at once. */
  start(requestId: string, text: string, kind?: MissionKind, options?: MissionOptions): string;
  /**
   * Stops the named mission, or every running and queued one. Returns whether any stopped. With a
   * reason, a stopped mission ends as failed with it (e.g. storage full) instead of "stopped".
   */
  abort(missionId?: string, reason?: ErrorShape): boolean;
  /** How many are running or waiting. */
  readonly active: number;
  /** The mission whose tools run now, for events they cause (e.g. a file to download). */
  readonly current: string | null;
  /** When the last mission ended (or these missions were created); now while one runs or waits. */
  readonly idleSince: number;
}

export function createMissions(deps: MissionDeps): Missions {
  const finishers = new Map<string, NonNullable<MissionOptions['onFinished']>>();
  const emit = (event: StackEventBody) => {
    deps.emit(event);
    if (event.type !== 'mission_finished') return;
    const finished = finishers.get(event.mission_id);
    finishers.delete(event.mission_id);
    finished?.({ status: event.status, ...(event.error ? { error: event.error } : {}) });
  };
  let idleSince = Date.now();
  const policy = deps.compaction ?? DEFAULT_POLICY;
  const running = new Map<string, AbortController>();
  let lock: Promise<void> = Promise.resolve();
  let current: string | null = null;
  // Hosts the user named this session; kept here too, so a compaction that summarises their
  // early messages does not forget them.
  const userHosts = new Set<string>();

  /** Summarises older turns when the last prompt came near the context window. Never throws. */
  async function compactIfNeeded(missionId: string, stream: StreamFn, messages: MessageParam[], promptTokens: number, signal: AbortSignal) {
    if (!needsCompaction(promptTokens, policy)) return null;
    const cut = findCut(messages, policy.keepRecent);
    if (cut < 0) return null;
    try {
      await deps.memory.hooks.preCompact('auto');
      const summary = await summarise(stream, deps.model(), transcriptOf(messages.slice(0, cut)), signal);
      emit({ type: 'context_compacted', mission_id: missionId, removed_messages: cut, prompt_tokens: promptTokens });
      return applySummary(messages, cut, summary);
    } catch {
      // Going on uncompacted is better than failing the mission; the model says if it overflows.
      return null;
    }
  }

  async function run(missionId: string, requestId: string, text: string, kind: MissionKind, controller: AbortController, task: MissionTask | undefined) {
    emit({ type: 'mission_started', mission_id: missionId, request_id: requestId, kind, text, ...(task ? { task } : {}) });
    current = missionId;
    const memoryHooks = deps.memory.hooks;
    // What the mission's subagents spent: in its usage once it ends.
    let subagentUsage = emptyUsage();
    try {
      if (controller.signal.aborted) {
        emit({ type: 'mission_finished', mission_id: missionId, status: 'aborted', usage: emptyUsage() });
        return;
      }
      // The recorded demo keeps to itself: its turns never enter the model's conversation or the
      // memory, and the user's canvas notes wait for their next real message.
      const demo = kind === 'demo';
      if (demo && !deps.demo) throw new Error('This stack has no recorded demo.');
      const hooks = demo ? undefined : deps.hooks;
      let userText = demo ? text : withInteractions(deps.canvas.takeInteractionNotes(), text);
      if (kind === 'chat' && hooks?.any('UserPromptSubmit')) {
        const verdict = await hooks.run('UserPromptSubmit', { prompt: text }, { mission_id: missionId }, controller.signal);
        if (verdict.block !== null) {
          // The message never reaches the agent: not in its conversation, not in its memory.
          const error = { code: 'hook_blocked' as const, message: `A hook stopped this message before the agent read it: ${verdict.block}` };
          emit({ type: 'mission_finished', mission_id: missionId, status: 'failed', usage: emptyUsage(), error });
          return;
        }
        if (verdict.context) userText += `\n\n<hook_output>\n${verdict.context}\n</hook_output>`;
      }
      if (kind === 'chat') await memoryHooks.userPromptSubmit(userText);
      const before = { messages: deps.conversation.messages, promptTokens: deps.conversation.promptTokens };
      const messages = withUserText(demo ? [] : before.messages, userText);
      if (!demo) {
        const held = deps.heldHosts?.() ?? new Set<string>();
        const typedNow = kind === 'chat' ? hostsNamedIn(text) : new Set<string>();
        for (const host of userHostsOf(messages)) if (!held.has(host) || typedNow.has(host)) userHosts.add(host);
        await deps.conversation.begin(messages);
      }
      if (demo) await deps.demo!.ready();
      const stream = demo ? deps.demo!.stream() : await deps.stream();
      // Memory is read at the start of each mission, and again after a compaction.
      let memoryText = demo ? '' : await deps.memory.prompt();
      const attachments = await deps.attachments();
      const skills = demo ? '' : ((await deps.skills?.().catch(() => '')) ?? '');
      const stackTools = demo || !deps.moreTools ? deps.tools : [...deps.tools, ...(await deps.moreTools().catch(() => []))];
      let checkpointed: Promise<void> | undefined;
      const authorize: NonNullable<LoopOptions['authorize']> = async (call, signal) => {
        if (hooks?.any('PreToolUse', call.name)) {
          const verdict = await hooks.run('PreToolUse', { tool_name: call.name, tool_input: call.input }, { mission_id: missionId, tool_use_id: call.tool_use_id, tool_name: call.name }, signal);
          if (verdict.block !== null) return { allow: false, reason: `A hook blocked this call: ${verdict.block}` };
        }
        const verdict = await deps.gate.check({ mission_id: missionId, tool: call.name, title: call.title, input: call.input }, signal, userHosts);
        // The stack as it was before the mission's first change: a checkpoint, taken once.
        if (verdict.allow && !demo && deps.beforeChange && !UNCHANGING_TOOLS.has(call.name)) {
          checkpointed ??= deps.beforeChange({ mission_id: missionId, kind, text });
          await checkpointed;
        }
        return verdict;
      };
      const afterTool: NonNullable<LoopOptions['afterTool']> = async (call, result, signal) => {
        if (!hooks?.any('PostToolUse', call.name)) return result;
        const verdict = await hooks.run(
          'PostToolUse',
          { tool_name: call.name, tool_input: call.input, tool_response: { content: result.content, is_error: result.is_error === true } },
          { mission_id: missionId, tool_use_id: call.tool_use_id, tool_name: call.name },
          signal,
        );
        return verdict.context ? { ...result, content: `${result.content}\n\nA hook after this call said: ${verdict.context}` } : result;
      };
      // The budget counts every model call of the mission, its subagents' too, as they come.
      const budget = demo ? 0 : (deps.budget?.() ?? 0);
      let spentTokens = 0;
      const spend = (usage: Usage) => {
        spentTokens += tokensOf(usage);
        if (budget > 0 && spentTokens >= budget && !controller.signal.aborted) controller.abort(new StopReason(budgetError(spentTokens, budget)));
      };
      const subagents = demo ? undefined : deps.subagents;
      const tools = subagents
        ? [
            ...stackTools,
            createTaskTool((request, context) =>
              subagents.run(
                request,
                {
                  missionId,
                  signal: controller.signal,
                  authorize,
                  afterTool,
                  attachments,
                  spent: (usage) => {
                    subagentUsage = addUsage(subagentUsage, usage);
                    spend(usage);
                  },
                },
                context.tool_use_id,
              ),
            ),
          ]
        : stackTools;
      const loop = (conversation: MessageParam[], promptTokens: number) =>
        runAgentLoop({
          stream,
          tools,
          model: deps.model(),
          system: () => systemPrompt({ canvas: deps.canvas.describe(), memory: memoryText, attachments, skills }),
          messages: conversation,
          promptTokens,
          compact: async (current, promptTokens, signal) => {
            if (demo) return null;
            const compacted = await compactIfNeeded(missionId, stream, current, promptTokens, signal);
            if (compacted) memoryText = await deps.memory.prompt();
            return compacted;
          },
          signal: controller.signal,
          onEvent: (event) => {
            forward(missionId, event, kind);
            if (event.type === 'message_end') spend(event.usage);
          },
          authorize,
          afterTool,
          ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
        });
      let outcome = await loop(messages, demo ? 0 : deps.conversation.promptTokens);
      // A stop hook may send the agent back to work, with its reason as a note from the user's
      // side; a few times at most (the hook hears `stop_hook_active` on the later ones).
      for (let returns = 0; returns < MAX_STOP_HOOK_RETURNS && kind === 'chat' && outcome.status === 'completed' && hooks?.any('Stop'); returns++) {
        const verdict = await hooks.run('Stop', { stop_hook_active: returns > 0 }, { mission_id: missionId }, controller.signal);
        if (verdict.block === null || controller.signal.aborted) break;
        const usage = outcome.usage;
        outcome = await loop(withUserText(outcome.messages, `<hook_output>\nA stop hook asks you to go on before finishing: ${verdict.block}\n</hook_output>`), outcome.promptTokens);
        outcome = { ...outcome, usage: addUsage(usage, outcome.usage) };
      }
      // Stopped for a reason (storage full) rather than by the user: it failed, and says why.
      outcome = { ...outcome, usage: addUsage(outcome.usage, subagentUsage) };
      const stoppedFor = stopReason(controller.signal);
      if (stoppedFor) {
        emit({ type: 'mission_finished', mission_id: missionId, status: 'failed', usage: outcome.usage, error: stoppedFor });
        if (!demo) await deps.conversation.end(outcome.messages, outcome.promptTokens).catch(() => {});
        return;
      }
      // A heartbeat with nothing to do leaves the conversation as it was (the transcript keeps it).
      const allClear = kind === 'heartbeat' && outcome.status === 'completed' && isAllClearTurn(outcome.messages.slice(messages.length));
      if (allClear) await deps.conversation.end(before.messages, before.promptTokens);
      else if (!demo) await deps.conversation.end(outcome.messages, outcome.promptTokens);
      if (kind === 'chat') await memoryHooks.stop();
      const error = outcome.status === 'failed' ? outcome.error : undefined;
      emit({ type: 'mission_finished', mission_id: missionId, status: outcome.status, usage: outcome.usage, ...(error ? { error } : {}) });
      if (error?.code === 'model_not_configured' || error?.code === 'model_unreachable') deps.onModelTrouble();
    } catch (error) {
      const shape = stopReason(controller.signal) ?? (isStorageFull(error) ? { code: 'storage', message: storageFullMessage('This request stopped') } : toErrorShape(error));
      emit({ type: 'mission_finished', mission_id: missionId, status: 'failed', usage: subagentUsage, error: shape });
    } finally {
      running.delete(missionId);
      current = null;
      if (running.size === 0) idleSince = Date.now();
    }
  }

  function forward(missionId: string, event: LoopEvent, kind: MissionKind) {
    const mission_id = missionId;
    // Recorded turns are not the agent's words nor the user's work: memory never hears of them.
    const hooks = kind === 'demo' ? QUIET_HOOKS : deps.memory.hooks;
    switch (event.type) {
      case 'text_delta':
        hooks.agentText(event.text);
        return emit({ type: 'assistant_delta', mission_id, text: event.text });
      case 'message_end':
        return emit({ type: 'assistant_message_end', mission_id, stop_reason: event.stop_reason, usage: event.usage });
      case 'tool_started':
        return emit({ type: 'tool_started', mission_id, tool_use_id: event.tool_use_id, name: event.name, title: event.title, detail: toolDetail(event.input) });
      case 'tool_finished':
        hooks.postToolUse({ name: event.name, input: event.input, output: event.result.content, ok: !event.result.is_error });
        return emit({
          type: 'tool_finished',
          mission_id,
          tool_use_id: event.tool_use_id,
          name: event.name,
          ok: !event.result.is_error,
          summary: event.result.content.slice(0, 500),
          output: event.result.content.length > 500 ? event.result.content.slice(0, 16_000) : undefined,
        });
      case 'retry':
        return emit({ type: 'model_retry', mission_id, attempt: event.attempt, delay_ms: event.delay_ms, reason: event.reason });
      default:
        return assertNever(event, 'loop event');
    }
  }

  return {
    start(requestId, text, kind = 'chat', options = {}) {
      const missionId = deps.newId('m');
      const controller = new AbortController();
      if (options.onFinished) finishers.set(missionId, options.onFinished);
      const task = options.task;
      emit({ type: 'mission_queued', mission_id: missionId, request_id: requestId, kind, text, position: running.size, ...(task ? { task } : {}) });
      running.set(missionId, controller);
      lock = lock.then(() => run(missionId, requestId, text, kind, controller, task));
      return missionId;
    },
    abort(missionId, reason) {
      let aborted = false;
      for (const [id, controller] of running) {
        if (missionId && id !== missionId) continue;
        if (!controller.signal.aborted) {
          controller.abort(reason ? new StopReason(reason) : undefined);
          aborted = true;
        }
      }
      return aborted;
    },
    get active() {
      return running.size;
    },
    get current() {
      return current;
    },
    get idleSince() {
      return running.size ? Date.now() : idleSince;
    },
  };
}

/** The beat's own turns: one reply, exactly HEARTBEAT_OK, and no tool call. */
function isAllClearTurn(added: MessageParam[]): boolean {
  if (added.length !== 1 || added[0]!.role !== 'assistant') return false;
  const content = added[0]!.content;
  const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return blocks.every((block) => block.type === 'text') && isAllClear(blocks.map((block) => (block.type === 'text' ? block.text : '')).join(''));
}

const QUIET_HOOKS: Pick<AgentMemory['hooks'], 'agentText' | 'postToolUse'> = { agentText: () => ({ ok: true }), postToolUse: () => ({ ok: true }) };

/** The words of a budget stop: what was used, the limit, and where to change it. */
export function budgetError(spent: number, budget: number): ErrorShape {
  const n = (value: number) => value.toLocaleString('en-US');
  return {
    code: 'budget',
    message: `Stopped at this mission's token budget: it used ${n(spent)} tokens of the ${n(budget)} allowed (its subagents included). What it did is above; raise the token budget per mission in Settings, or ask for a smaller step.`,
  };
}

class StopReason extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
  }
}

function stopReason(signal: AbortSignal): ErrorShape | null {
  return signal.aborted && signal.reason instanceof StopReason ? signal.reason.shape : null;
}

/** What a tool call was given, for the chat's expandable details: a command as itself, else JSON. */
function toolDetail(input: unknown): string {
  const record = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const text = typeof record.command === 'string' ? record.command : typeof record.python === 'string' ? record.python : JSON.stringify(input, null, 2) ?? '';
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}
