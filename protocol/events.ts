// Events: every one a stack emits, each logged with a monotonic `seq` so a client can resume after
// an offset.

import type { CheckpointInfo } from './checkpoints.ts';
import type { ComputerStatus } from './computer.ts';
import type { DocumentInfo } from './documents.ts';
import type { ErrorShape } from './errors.ts';
import type { HookRun } from './hooks.ts';
import type { McpInfo } from './mcp.ts';
import type { MissionKind, MissionStatus, MissionTask, SubagentInfo, SubagentStep, Usage } from './missions.ts';
import type { PermissionRule } from './permissions.ts';
import type { ModelStatus, Settings } from './settings.ts';
import type { TaskInfo } from './tasks.ts';
import type { TrustState } from './trust.ts';
import type { CanvasWindow, WindowPatch } from './windows.ts';

export type StackEventBody =
  | { type: 'mission_queued'; mission_id: string; request_id: string; kind: MissionKind; text: string; position: number; task?: MissionTask }
  | { type: 'mission_started'; mission_id: string; request_id: string; kind: MissionKind; text: string; task?: MissionTask }
  | { type: 'assistant_delta'; mission_id: string; text: string }
  | { type: 'assistant_message_end'; mission_id: string; stop_reason: string | null; usage: Usage }
  /** `detail`: what the tool was given (a command as itself, else its input as JSON), for the details view. */
  | { type: 'tool_started'; mission_id: string; tool_use_id: string; name: string; title: string; detail?: string }
  | {
      type: 'tool_finished';
      mission_id: string;
      tool_use_id: string;
      name: string;
      ok: boolean;
      summary: string;
      /** The result the model read, when longer than the summary (at most 16,000 characters). */
      output?: string;
    }
  /** `window`, for a document a window can show: whether one opened for it (only a few open by themselves). */
  | { type: 'document_added'; document: DocumentInfo; window?: boolean }
  | { type: 'document_updated'; document: DocumentInfo }
  | { type: 'document_progress'; document_id: string; page: number; pages: number }
  | { type: 'file_ready'; mission_id: string | null; path: string; mime: string; size: number }
  | { type: 'context_compacted'; mission_id: string; removed_messages: number; prompt_tokens: number }
  | { type: 'model_retry'; mission_id: string; attempt: number; delay_ms: number; reason: string }
  | { type: 'mission_finished'; mission_id: string; status: MissionStatus; usage: Usage; error?: ErrorShape }
  | { type: 'window_opened'; window: CanvasWindow }
  | { type: 'window_patched'; window_id: string; patch: WindowPatch; updated_at: number }
  | { type: 'window_closed'; window_id: string }
  | { type: 'settings_changed'; settings: Settings }
  | { type: 'trust_changed'; trust: TrustState | null }
  | {
      type: 'permission_decision';
      mission_id: string;
      tool: string;
      title: string;
      decision: 'allowed' | 'denied';
      rule_id?: string;
      reason?: string;
    }
  | { type: 'permission_requested'; ask_id: string; mission_id: string; tool: string; title: string; rule_id: string; reason: string }
  | { type: 'permission_rules_changed'; rules: PermissionRule[] }
  /** A hook ran: logged in the transcript and shown in the chat; `tool_use_id` and `tool` for tool events. */
  | { type: 'hook_ran'; mission_id: string; tool_use_id?: string; tool?: string; run: HookRun }
  | { type: 'mcp_changed'; mcp: McpInfo }
  | { type: 'model_status'; status: ModelStatus }
  | { type: 'computer_status'; status: ComputerStatus }
  /** A scheduled task was created or changed, or one of its runs moved on. */
  | { type: 'task_changed'; task: TaskInfo }
  | { type: 'task_removed'; task_id: string }
  /** A checkpoint was taken (`checkpoint`), or one failed (`error`); the timeline asks for the list again. */
  | { type: 'checkpoint_taken'; checkpoint: CheckpointInfo }
  | { type: 'checkpoint_failed'; mission_id: string | null; error: ErrorShape }
  /** A subagent started, moved on (its activity, its spend) or ended. */
  | { type: 'subagent_changed'; subagent: SubagentInfo }
  /** A step of a subagent's work, for its transcript on the task board. */
  | { type: 'subagent_step'; mission_id: string; subagent_id: string; step: SubagentStep }
  /** A slice of a running tool's output (bash), for the chat's tool details; coalesced. */
  | { type: 'tool_output'; mission_id: string; tool_use_id: string; stream: 'stdout' | 'stderr'; text: string };

export type StackEvent = StackEventBody & { seq: number; at: number };

export type StackEventType = StackEvent['type'];

export type EventListener = (events: StackEvent[]) => void;
