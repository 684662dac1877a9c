// One mission from the user's message to its end: the message past the user's hooks and into
// the conversation, the agent loop with the stack's tools, memory and permission gate, a stop
// hook's returns, and the conversation kept (or, for an all-clear heartbeat, left as it was).
import { applySummary, findCut, needsCompaction, summarise, transcriptOf, type CompactionPolicy } from './agent/compaction.ts';
import { toErrorShape } from './agent/errors.ts';
import { runAgentLoop } from './agent/loop.ts';
import { addUsage, emptyUsage } from './agent/pricing.ts';
import { systemPrompt } from './agent/system-prompt.ts';
import type { AgentTool, MessageParam, StreamFn } from './agent/types.ts';
import type { AgentMemory } from './agent-memory.ts';
import type { Canvas } from './canvas.ts';
import { userHostsOf, withInteractions, withUserText, type Conversation } from './conversation.ts';
import { isAllClear } from './heartbeat.ts';
import type { Hooks } from './hooks.ts';
import { forwardLoopEvent } from './mission-events.ts';
import { stopReason, tokenBudget } from './mission-stop.ts';
import { missionToolHooks } from './mission-tool-hooks.ts';
import type { PermissionGate } from './permissions/gate.ts';
import { hostsNamedIn } from './permissions/rules.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionKind, MissionTask, Usage } from '../protocol/missions.ts';
import { isStorageFull, storageFullMessage } from './storage-full.ts';
import type { Subagents } from './subagents.ts';
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

/** How many times a stop hook may send the agent back to work in one mission. */
export const MAX_STOP_HOOK_RETURNS = 3;

/** What every mission of a stack shares. */
export interface MissionsContext {
  deps: MissionDeps;
  emit(event: StackEventBody): void;
  policy: CompactionPolicy;
  /**
   * Hosts the user named this session; kept here too, so a compaction that summarises their
   * early messages does not forget them.
   */
  userHosts: Set<string>;
}

export interface Mission {
  id: string;
  requestId: string;
  text: string;
  kind: MissionKind;
  controller: AbortController;
  /** A scheduled task's run: named on the mission's events. */
  task: MissionTask | undefined;
}

type Loop = (conversation: MessageParam[], promptTokens: number) => ReturnType<typeof runAgentLoop>;
type Outcome = Awaited<ReturnType<Loop>>;

/** Runs a mission that has started to its end, which its `mission_finished` event says. Never throws. */
export async function runMission(ctx: MissionsContext, mission: Mission): Promise<void> {
  const { deps, emit } = ctx;
  const { id: missionId, text, kind, controller } = mission;
  const memoryHooks = deps.memory.hooks;
  // What the mission's subagents spent: in its usage once it ends.
  const subagents = { usage: emptyUsage() };
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
    const userText = await userMessage(ctx, mission, hooks);
    if (userText === null) return;
    if (kind === 'chat') await memoryHooks.userPromptSubmit(userText);
    const before = { messages: deps.conversation.messages, promptTokens: deps.conversation.promptTokens };
    const messages = withUserText(demo ? [] : before.messages, userText);
    if (!demo) {
      const held = deps.heldHosts?.() ?? new Set<string>();
      const typedNow = kind === 'chat' ? hostsNamedIn(text) : new Set<string>();
      for (const host of userHostsOf(messages)) if (!held.has(host) || typedNow.has(host)) ctx.userHosts.add(host);
      await deps.conversation.begin(messages);
    }
    const loop = await missionLoop(ctx, mission, hooks, subagents);
    let outcome = await loop(messages, demo ? 0 : deps.conversation.promptTokens);
    outcome = await stopHookReturns(mission, hooks, loop, outcome);
    // Stopped for a reason (storage full) rather than by the user: it failed, and says why.
    outcome = { ...outcome, usage: addUsage(outcome.usage, subagents.usage) };
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
    emit({ type: 'mission_finished', mission_id: missionId, status: 'failed', usage: subagents.usage, error: shape });
  }
}

/**
 * The user's message as the agent reads it: with the canvas notes and what a UserPromptSubmit
 * hook added; null when a hook stopped it (the mission has then finished, saying so).
 */
async function userMessage(ctx: MissionsContext, mission: Mission, hooks: Hooks | undefined): Promise<string | null> {
  const { id: missionId, text, kind, controller } = mission;
  let userText = kind === 'demo' ? text : withInteractions(ctx.deps.canvas.takeInteractionNotes(), text);
  if (kind === 'chat' && hooks?.any('UserPromptSubmit')) {
    const verdict = await hooks.run('UserPromptSubmit', { prompt: text }, { mission_id: missionId }, controller.signal);
    if (verdict.block !== null) {
      // The message never reaches the agent: not in its conversation, not in its memory.
      const error = { code: 'hook_blocked' as const, message: `A hook stopped this message before the agent read it: ${verdict.block}` };
      ctx.emit({ type: 'mission_finished', mission_id: missionId, status: 'failed', usage: emptyUsage(), error });
      return null;
    }
    if (verdict.context) userText += `\n\n<hook_output>\n${verdict.context}\n</hook_output>`;
  }
  return userText;
}

/**
 * The agent loop as this mission runs it: its model stream, memory, attachments, skills and
 * tools (the `task` tool's subagents among them, their usage counted into `subagents`), each tool
 * call past the hooks and the gate, and the token budget over it all.
 */
async function missionLoop(ctx: MissionsContext, mission: Mission, hooks: Hooks | undefined, subagents: { usage: Usage }): Promise<Loop> {
  const { deps } = ctx;
  const { id: missionId, text, kind, controller } = mission;
  const demo = kind === 'demo';
  if (demo) await deps.demo!.ready();
  const stream = demo ? deps.demo!.stream() : await deps.stream();
  // Memory is read at the start of each mission, and again after a compaction.
  let memoryText = demo ? '' : await deps.memory.prompt();
  const attachments = await deps.attachments();
  const skills = demo ? '' : ((await deps.skills?.().catch(() => '')) ?? '');
  const stackTools = demo || !deps.moreTools ? deps.tools : [...deps.tools, ...(await deps.moreTools().catch(() => []))];
  const { authorize, afterTool } = missionToolHooks({ missionId, kind, text, demo, hooks, stack: deps, userHosts: ctx.userHosts });
  // The budget counts every model call of the mission, its subagents' too, as they come.
  const spend = tokenBudget(demo ? 0 : (deps.budget?.() ?? 0), controller);
  const runner = demo ? undefined : deps.subagents;
  const tools = runner
    ? [
        ...stackTools,
        createTaskTool((request, context) =>
          runner.run(
            request,
            {
              missionId,
              signal: controller.signal,
              authorize,
              afterTool,
              attachments,
              spent: (usage) => {
                subagents.usage = addUsage(subagents.usage, usage);
                spend(usage);
              },
            },
            context.tool_use_id,
          ),
        ),
      ]
    : stackTools;
  return (conversation, promptTokens) =>
    runAgentLoop({
      stream,
      tools,
      model: deps.model(),
      system: () => systemPrompt({ canvas: deps.canvas.describe(), memory: memoryText, attachments, skills }),
      messages: conversation,
      promptTokens,
      compact: async (current, promptTokens, signal) => {
        if (demo) return null;
        const compacted = await compactIfNeeded(ctx, missionId, stream, current, promptTokens, signal);
        if (compacted) memoryText = await deps.memory.prompt();
        return compacted;
      },
      signal: controller.signal,
      onEvent: (event) => {
        forwardLoopEvent(ctx.emit, deps.memory, missionId, event, kind);
        if (event.type === 'message_end') spend(event.usage);
      },
      authorize,
      afterTool,
      ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
    });
}

/**
 * A stop hook may send the agent back to work, with its reason as a note from the user's side;
 * a few times at most (the hook hears `stop_hook_active` on the later ones).
 */
async function stopHookReturns(mission: Mission, hooks: Hooks | undefined, loop: Loop, first: Outcome): Promise<Outcome> {
  const { id: missionId, kind, controller } = mission;
  let outcome = first;
  for (let returns = 0; returns < MAX_STOP_HOOK_RETURNS && kind === 'chat' && outcome.status === 'completed' && hooks?.any('Stop'); returns++) {
    const verdict = await hooks.run('Stop', { stop_hook_active: returns > 0 }, { mission_id: missionId }, controller.signal);
    if (verdict.block === null || controller.signal.aborted) break;
    const usage = outcome.usage;
    outcome = await loop(withUserText(outcome.messages, `<hook_output>\nA stop hook asks you to go on before finishing: ${verdict.block}\n</hook_output>`), outcome.promptTokens);
    outcome = { ...outcome, usage: addUsage(usage, outcome.usage) };
  }
  return outcome;
}

/** Summarises older turns when the last prompt came near the context window. Never throws. */
async function compactIfNeeded(ctx: MissionsContext, missionId: string, stream: StreamFn, messages: MessageParam[], promptTokens: number, signal: AbortSignal) {
  const { deps, policy } = ctx;
  if (!needsCompaction(promptTokens, policy)) return null;
  const cut = findCut(messages, policy.keepRecent);
  if (cut < 0) return null;
  try {
    await deps.memory.hooks.preCompact('auto');
    const summary = await summarise(stream, deps.model(), transcriptOf(messages.slice(0, cut)), signal);
    ctx.emit({ type: 'context_compacted', mission_id: missionId, removed_messages: cut, prompt_tokens: promptTokens });
    return applySummary(messages, cut, summary);
  } catch {
    // Going on uncompacted is better than failing the mission; the model says if it overflows.
    return null;
  }
}

/** The beat's own turns: one reply, exactly HEARTBEAT_OK, and no tool call. */
function isAllClearTurn(added: MessageParam[]): boolean {
  if (added.length !== 1 || added[0]!.role !== 'assistant') return false;
  const content = added[0]!.content;
  const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return blocks.every((block) => block.type === 'text') && isAllClear(blocks.map((block) => (block.type === 'text' ? block.text : '')).join(''));
}
