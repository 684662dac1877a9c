// What the stack worker's request handlers share: the stack's parts, built once in stack.ts, and
// the settings, which `update_settings` replaces. Each capability's handlers live in their own
// module beside this one; stack.ts puts them together into the one typed request protocol.
import type { AgentMemory } from '../agent-memory.ts';
import type { Canvas } from '../canvas.ts';
import type { Computer } from '../computer.ts';
import type { DeviceCredentials } from '../device.ts';
import type { createPipeline } from '../documents/pipeline.ts';
import type { Heartbeat } from '../heartbeat.ts';
import type { Hooks } from '../hooks.ts';
import type { McpServers } from '../mcp/servers.ts';
import type { Missions } from '../missions.ts';
import type { PermissionGate } from '../permissions/gate.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import type { ModelStatus, Settings } from '../../protocol/settings.ts';
import type { Method, ParamsOf, ResultOf } from '../../protocol/stack-api.ts';
import type { StackDeps } from '../stack-deps.ts';
import type { Subagents } from '../subagents.ts';
import type { Scheduler } from '../tasks.ts';
import type { UserFiles } from '../user-files.ts';

export interface StackContext {
  deps: StackDeps;
  emit(event: StackEventBody): void;
  newId(prefix: string): string;
  /** The stack's settings now; `update_settings` replaces them. */
  settings: Settings;
  missions: Missions;
  canvas: Canvas;
  gate: PermissionGate;
  hooks: Hooks;
  mcp: McpServers;
  memory: AgentMemory;
  /** Absent in tests without a computer. */
  computer: Computer | undefined;
  /** The user space, telling the computer of each change. */
  files: UserFiles;
  pipeline: ReturnType<typeof createPipeline>;
  credentials: DeviceCredentials;
  /** Asks the model endpoint (and pairs with a local proxy that allows it); emits `model_status`. */
  checkModel(): Promise<ModelStatus>;
  /** The heartbeat's timer (`schedule()` after a settings change) and the message a beat sends. */
  heartbeat: Heartbeat;
  /** Scheduled tasks and their timers. */
  tasks: Scheduler;
  /** The missions' subagents (the `task` tool), for the user's cancel. */
  subagents: Subagents;
}

/** The handlers of some of the protocol's methods: `params` as sent, `id` the request's. */
export type Handlers<K extends Method> = { [M in K]: (params: ParamsOf<M>, id: string) => Promise<ResultOf<M>> };
