// The agent's side of a stack: the user's hooks and MCP servers, the missions (one at a time, each
// with its subagents), the heartbeat and the scheduled tasks, wired to the parts the stack built.
import type { ErrorShape } from '../protocol/errors.ts';
import type { StackEventBody } from '../protocol/events.ts';
import type { MissionKind, MissionStatus } from '../protocol/missions.ts';
import type { Settings } from '../protocol/settings.ts';
import { toErrorShape } from './agent/errors.ts';
import type { AgentTool, StreamFn } from './agent/types.ts';
import type { AgentMemory } from './agent-memory.ts';
import type { Canvas } from './canvas.ts';
import { checkpointBefore, type Checkpoints } from './checkpoints/checkpoints.ts';
import { ComputerUnavailableError, type Computer } from './computer.ts';
import type { Conversation } from './conversation.ts';
import { recordedDemoStream } from './demo/demo.ts';
import { attachmentIndex } from './documents/find-document.ts';
import type { createPipeline } from './documents/pipeline.ts';
import { createHeartbeat, HEARTBEAT_FILE } from './heartbeat.ts';
import { loadHooks } from './hooks.ts';
import { loadMcpServers } from './mcp/servers.ts';
import { createMissions } from './missions.ts';
import type { ModelSession } from './model-session.ts';
import type { PermissionGate } from './permissions/gate.ts';
import type { Skills } from './skills.ts';
import type { StackDeps } from './stack-deps.ts';
import { isStorageFull, storageFullMessage } from './storage-full.ts';
import { createSubagents } from './subagents.ts';
import { createScheduler, scheduledPrompt } from './tasks.ts';
import type { Trust } from './trust.ts';

/** How long a mission's first change waits for the checkpoint before it to hold the stack. */
const CHECKPOINT_WAIT_MS = 15_000;

export interface AgentParts {
  deps: StackDeps;
  emit(event: StackEventBody): void;
  newId(prefix: string): string;
  settings: () => Settings;
  session: ModelSession;
  trust: Trust;
  canvas: Canvas;
  gate: PermissionGate;
  conversation: Conversation;
  memory: AgentMemory;
  computer: Computer | undefined;
  tools: AgentTool[];
  skills: Skills;
  checkpoints: Checkpoints | null;
  pipeline: ReturnType<typeof createPipeline>;
  stream: () => Promise<StreamFn>;
}

export async function mountAgent(parts: AgentParts) {
  const { deps, emit, newId, settings, session, trust, canvas, gate, conversation, memory, computer, tools, skills, checkpoints, pipeline, stream } = parts;
  // The user's hooks run in the computer, like the bash tool's commands.
  const hooks = await loadHooks({
    storage: deps.storage,
    emit,
    exec: async (request, signal) => {
      if (!computer) throw new ComputerUnavailableError('this stack has no computer to run hooks on');
      return computer.exec(request, { signal });
    },
  });
  // The user's MCP servers: stdio ones run in the computer, remote ones are reached through the proxy.
  const mcp = await loadMcpServers({
    storage: deps.storage,
    emit,
    computer: computer ? { service: (request, options) => computer.service(request, options) } : null,
    remote: session.remoteMcp,
  });
  // Subagents work with the stack's tools (a few of them each); the task board opens with the first.
  const subagents = createSubagents({
    emit: (event) => {
      emit(event);
      if (event.type === 'subagent_changed' && event.subagent.status === 'waiting' && !canvas.windows().some((win) => win.kind === 'board')) {
        void canvas.openWindow({ kind: 'board', title: 'Task board' }).catch(() => {});
      }
    },
    newId,
    tools,
    stream,
    model: () => settings().model,
    ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
  });
  const beforeChange = async (mission: { mission_id: string; kind: MissionKind; text: string }) => {
    // The mission goes on: a checkpoint that could not be taken is said, not fatal.
    await checkpointBefore(checkpoints!, mission.kind === 'scheduled' ? 'scheduled' : 'mission', mission.text, CHECKPOINT_WAIT_MS, (error) => {
      console.warn('a checkpoint could not be taken', error);
      emit({ type: 'checkpoint_failed', mission_id: mission.mission_id, error: isStorageFull(error) ? { code: 'storage', message: storageFullMessage('No checkpoint was taken before this') } : toErrorShape(error) });
    });
  };
  const missions = createMissions({
    emit,
    newId,
    tools,
    ...(checkpoints ? { beforeChange } : {}),
    subagents,
    // A server still starting gets a moment; one not up by then joins at a later mission.
    moreTools: () => mcp.tools(20_000),
    budget: () => settings().mission_token_budget ?? 0,
    canvas,
    gate,
    hooks,
    memory,
    conversation,
    stream,
    model: () => settings().model,
    attachments: () => attachmentIndex(deps.memory),
    skills: () => skills.promptList(),
    onModelTrouble: () => void session.checkModel(),
    heldHosts: () => trust.heldHosts(),
    // The demo reads the samples once the pipeline has read them (an OCR may still be running).
    demo: { stream: deps.demoStream ?? (() => recordedDemoStream()), ready: () => pipeline.idle() },
    ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
    ...(deps.compaction ? { compaction: deps.compaction } : {}),
  });

  // The heartbeat wakes the agent on its own every few minutes, when the user turned it on.
  const heartbeat = createHeartbeat({
    settings: settings,
    checklist: () => deps.memory.stackFiles.readText(HEARTBEAT_FILE),
    busy: () => missions.active > 0,
    // Offline with no local model, a beat could only fail: ask again only when the last check said no.
    modelReady: async () => session.model.state === 'ready' || (await session.checkModel()).state === 'ready',
    beat: (prompt) => void missions.start(newId('hb'), prompt, 'heartbeat'),
  });

  // Scheduled tasks: each run a mission of its own, tried up to three times.
  const tasks = createScheduler({
    store: deps.memory.tasks,
    emit,
    newId,
    run: (task, info) => {
      let settle: (outcome: { status: MissionStatus; error?: ErrorShape }) => void = () => {};
      const finished = new Promise<{ status: MissionStatus; error?: ErrorShape }>((resolve) => (settle = resolve));
      const missionId = missions.start(newId('task'), scheduledPrompt(task, info), 'scheduled', { task: info.task, onFinished: settle });
      return { missionId, finished };
    },
    busy: () => missions.active > 0,
    idleSince: () => missions.idleSince,
  });
  return { hooks, mcp, subagents, missions, heartbeat, tasks };
}
