// Folds the stack's events into what the UI shows. Pure, so it is unit tested.
import type { ComputerStatus } from '../../protocol/computer.ts';
import { assertNever } from '../../protocol/errors.ts';
import type { StackEvent } from '../../protocol/events.ts';
import type { HookRun } from '../../protocol/hooks.ts';
import type { McpInfo } from '../../protocol/mcp.ts';
import { HEARTBEAT_OK, type MissionTask, type SubagentInfo, type SubagentStep, tokensOf } from '../../protocol/missions.ts';
import type { ModelStatus, Settings } from '../../protocol/settings.ts';
import type { TaskInfo } from '../../protocol/tasks.ts';
import type { TrustState } from '../../protocol/trust.ts';
import { applyWindowPatch, type CanvasWindow } from '../../protocol/windows.ts';
import { appendOutput, emptyOutput, type ToolOutput } from './tool-output.ts';

export type ChatEntry =
  /** `recorded`: the recorded demo's request and replies (pre-recorded, not from a model). */
  | { kind: 'user'; key: string; mission_id: string; text: string; queued: boolean; recorded?: true }
  | { kind: 'assistant'; key: string; mission_id: string; text: string; streaming: boolean; recorded?: true }
  | {
      kind: 'tool';
      key: string;
      mission_id: string;
      name: string;
      title: string;
      status: 'running' | 'ok' | 'error';
      summary: string;
      /** What the tool was given (a command as itself), when the worker says. */
      detail: string;
      /** What it printed while it ran (bash), the first lines and the newest. */
      output: ToolOutput;
      /** The result the model read, when longer than the summary. */
      result: string;
      started_at: number;
      /** Null while it runs. */
      duration_ms: number | null;
    }
  /** `document`: the path of an added document whose window did not open by itself (the notice offers Open). */
  | { kind: 'notice'; key: string; mission_id: string; text: string; document?: string }
  /** One of the user's hooks ran (`tool` for a tool event). */
  | { kind: 'hook'; key: string; mission_id: string; tool?: string; run: HookRun }
  | { kind: 'error'; key: string; mission_id: string; code: string; text: string; retry_text?: string }
  | { kind: 'usage'; key: string; mission_id: string; tokens: number; cost_usd: number | null }
  | { kind: 'download'; key: string; mission_id: string; path: string; mime: string; size: number }
  | { kind: 'permission'; key: string; mission_id: string; ask_id: string; title: string; reason: string; state: 'pending' | 'allowed' | 'denied' };

export interface StackView {
  lastSeq: number;
  /**
   * The snapshot's seq: windows, settings and model status up to it come from the snapshot, so
   * replaying older events (to rebuild the chat after a reload) skips theirs.
   */
  snapshotSeq: number;
  settings: Settings | null;
  /** Where a stack from elsewhere came from and what it brought; null for one made here. */
  trust: TrustState | null;
  model: ModelStatus;
  /** Null until the snapshot says. */
  computer: ComputerStatus | null;
  /** The MCP servers as last reported (Settings asks for them when it opens). */
  mcp: McpInfo | null;
  windows: CanvasWindow[];
  chat: ChatEntry[];
  /** Missions accepted (queued or running) and not yet finished, oldest first. */
  activeMissions: string[];
  /** Tokens and cost since the app opened (replayed history included), finished missions only. */
  session: Spend;
  /** Running missions' spend so far, from each model reply's usage; gone when they finish. */
  live: Record<string, Spend>;
  /** The pipeline's state of each uploaded document, by its path (for its document window). */
  documents: Record<string, DocumentState>;
  /** The latest recorded demo played in this stack, while its banner is due. */
  demo: DemoState | null;
  /**
   * Heartbeats that have done nothing visible yet: their entries are not shown, and one that ends
   * with the all-clear (HEARTBEAT_OK) leaves no trace in the chat.
   */
  quietBeats: string[];
  /** Scheduled tasks as their latest events say (null: removed), with the seq that said it. */
  tasks: Record<string, { seq: number; task: TaskInfo | null }>;
  /** Scheduled runs' missions and the task each belongs to (for the chat and notifications). */
  scheduled: Record<string, MissionTask>;
  /** The missions' subagents as their latest events say, with their transcripts (the task board). */
  subagents: Record<string, BoardEntry>;
  /** The seq of the latest checkpoint taken (0: none since the app opened): the timeline reads its list again. */
  checkpointSeq: number;
}

/** A subagent on the task board: how it is doing, and its steps (a tool call once, updated when it ends). */
export interface BoardEntry {
  info: SubagentInfo;
  steps: SubagentStep[];
}

/** Steps kept per subagent: its transcript on the board shows the newest. */
const MAX_STEPS = 200;

export interface DemoState {
  mission_id: string;
  state: 'playing' | 'finished' | 'stopped' | 'failed';
}

export interface DocumentState {
  id: string;
  status: string;
  error: string | null;
  /** While pages are being read. */
  progress?: { page: number; pages: number };
}

export interface Spend {
  tokens: number;
  /** Null when a model's price is unknown. */
  cost_usd: number | null;
}

export const emptyView: StackView = {
  lastSeq: 0,
  snapshotSeq: 0,
  settings: null,
  trust: null,
  model: { state: 'unknown' },
  computer: null,
  mcp: null,
  windows: [],
  chat: [],
  activeMissions: [],
  session: { tokens: 0, cost_usd: 0 },
  live: {},
  documents: {},
  demo: null,
  quietBeats: [],
  tasks: {},
  scheduled: {},
  subagents: {},
  checkpointSeq: 0,
};

export function addSpend(a: Spend, b: Spend): Spend {
  return { tokens: a.tokens + b.tokens, cost_usd: a.cost_usd === null || b.cost_usd === null ? null : a.cost_usd + b.cost_usd };
}

export function applyEvents(view: StackView, events: StackEvent[]): StackView {
  let next = view;
  for (const event of events) {
    if (event.seq <= next.lastSeq) continue;
    next = event.seq <= next.snapshotSeq && SNAPSHOT_STATE.has(event.type) ? { ...next, lastSeq: event.seq } : { ...watchBeats(applyEvent(next, event), event), lastSeq: event.seq };
  }
  return next;
}

/** The entries the chat shows: all but those of heartbeats that have done nothing visible yet. */
export function visibleChat(chat: ChatEntry[], quietBeats: string[]): ChatEntry[] {
  return quietBeats.length ? chat.filter((entry) => !quietBeats.includes(entry.mission_id)) : chat;
}

/**
 * A heartbeat stays out of sight until it does something the user should see (a tool, a
 * question, words other than the all-clear, a failure); one that ends with the all-clear is
 * taken out of the chat altogether (its spend still counts).
 */
function watchBeats(view: StackView, event: StackEvent): StackView {
  if (event.type === 'mission_queued') return event.kind === 'heartbeat' ? { ...view, quietBeats: [...view.quietBeats, event.mission_id] } : view;
  const id = 'mission_id' in event ? event.mission_id : null;
  if (!id || !view.quietBeats.includes(id)) return view;
  const quietBeats = view.quietBeats.filter((beat) => beat !== id);
  switch (event.type) {
    case 'assistant_delta': {
      const said = view.chat.findLast((entry) => entry.kind === 'assistant' && entry.mission_id === id);
      return said?.kind === 'assistant' && HEARTBEAT_OK.startsWith(said.text.trim()) ? view : { ...view, quietBeats };
    }
    case 'mission_finished':
      return event.status === 'completed' ? { ...view, quietBeats, chat: view.chat.filter((entry) => entry.mission_id !== id) } : { ...view, quietBeats };
    case 'tool_started':
    case 'permission_requested':
    case 'hook_ran':
    case 'model_retry':
    case 'file_ready':
      return { ...view, quietBeats };
    default:
      return view;
  }
}

const SNAPSHOT_STATE = new Set<StackEvent['type']>(['window_opened', 'window_patched', 'window_closed', 'settings_changed', 'trust_changed', 'model_status', 'computer_status', 'permission_rules_changed']);

/** The chat's notice for a checkpoint not taken before a mission; a storage-full message already says so itself. */
function checkpointFailedText(message: string): string {
  const said = 'No checkpoint was taken before this';
  return message.startsWith(said) ? message : `${said}: ${message}`;
}

/**
 * Adds a mission's entry to the chat: after what came before it, but above the messages still
 * queued behind it, so a reply reads on in one piece while later messages wait below.
 */
function insert(chat: ChatEntry[], entry: ChatEntry): ChatEntry[] {
  const waiting = entry.mission_id ? chat.findIndex((other) => other.kind === 'user' && other.queued && other.mission_id !== entry.mission_id) : -1;
  return waiting < 0 ? [...chat, entry] : [...chat.slice(0, waiting), entry, ...chat.slice(waiting)];
}

type EventOf<T extends StackEvent['type']> = Extract<StackEvent, { type: T }>;

/** One event folded into the view: each family of events has its own function below. */
function applyEvent(view: StackView, event: StackEvent): StackView {
  switch (event.type) {
    case 'mission_queued':
    case 'mission_started':
    case 'assistant_delta':
    case 'assistant_message_end':
    case 'model_retry':
    case 'mission_finished':
    case 'context_compacted':
      return applyMissionEvent(view, event);
    case 'tool_started':
    case 'tool_output':
    case 'tool_finished':
    case 'hook_ran':
    case 'file_ready':
      return applyToolEvent(view, event);
    case 'permission_requested':
    case 'permission_decision':
    case 'permission_rules_changed':
      return applyPermissionEvent(view, event);
    case 'document_added':
    case 'document_progress':
    case 'document_updated':
      return applyDocumentEvent(view, event);
    case 'subagent_changed':
    case 'subagent_step':
      return applySubagentEvent(view, event);
    case 'window_opened':
    case 'window_patched':
    case 'window_closed':
      return applyWindowEvent(view, event);
    case 'settings_changed':
    case 'trust_changed':
    case 'model_status':
    case 'computer_status':
    case 'mcp_changed':
    case 'task_changed':
    case 'task_removed':
    case 'checkpoint_taken':
    case 'checkpoint_failed':
      return applyStackStateEvent(view, event);
    default:
      return assertNever(event, 'stack event');
  }
}

type MissionEvent = EventOf<'mission_queued' | 'mission_started' | 'assistant_delta' | 'assistant_message_end' | 'model_retry' | 'mission_finished' | 'context_compacted'>;

/** A mission's life in the chat: queued, started, the model's words, retries, its end. */
function applyMissionEvent(view: StackView, event: MissionEvent): StackView {
  const key = `e${event.seq}`;
  switch (event.type) {
    case 'mission_queued':
      return queueMission(view, event, key);
    case 'mission_started':
      return {
        ...view,
        chat: view.chat.map((entry) => (entry.kind === 'user' && entry.mission_id === event.mission_id && entry.queued ? { ...entry, queued: false } : entry)),
      };
    case 'assistant_delta': {
      const at = view.chat.findLastIndex((entry) => entry.mission_id === event.mission_id);
      const last = view.chat[at];
      if (last?.kind === 'assistant' && last.streaming) {
        const chat = [...view.chat];
        chat[at] = { ...last, text: last.text + event.text };
        return { ...view, chat };
      }
      const recorded = view.demo?.mission_id === event.mission_id ? { recorded: true as const } : {};
      return { ...view, chat: insert(view.chat, { kind: 'assistant', key, mission_id: event.mission_id, text: event.text, streaming: true, ...recorded }) };
    }
    case 'assistant_message_end': {
      const spent = { tokens: tokensOf(event.usage), cost_usd: event.usage.cost_usd };
      const live = { ...view.live, [event.mission_id]: addSpend(view.live[event.mission_id] ?? { tokens: 0, cost_usd: 0 }, spent) };
      return {
        ...view,
        live,
        chat: view.chat.map((entry) => (entry.kind === 'assistant' && entry.streaming && entry.mission_id === event.mission_id ? { ...entry, streaming: false } : entry)),
      };
    }
    case 'model_retry':
      return {
        ...view,
        chat: insert(view.chat, { kind: 'notice', key, mission_id: event.mission_id, text: `${event.reason} Retrying in ${(event.delay_ms / 1000).toFixed(1)} s (attempt ${event.attempt + 1}).` }),
      };
    case 'mission_finished':
      return finishMission(view, event, key);
    case 'context_compacted':
      return {
        ...view,
        chat: insert(view.chat, { kind: 'notice', key, mission_id: event.mission_id, text: `Context compacted: ${event.removed_messages} older messages were summarised to make room.` }),
      };
    default:
      return assertNever(event, 'mission event');
  }
}

function queueMission(view: StackView, event: EventOf<'mission_queued'>, key: string): StackView {
  const queued = event.position > 0;
  const entry: ChatEntry =
    event.kind === 'chat'
      ? { kind: 'user', key, mission_id: event.mission_id, text: event.text, queued }
      : event.kind === 'demo'
        ? { kind: 'user', key, mission_id: event.mission_id, text: event.text, queued, recorded: true }
        : { kind: 'notice', key, mission_id: event.mission_id, text: event.kind === 'scheduled' ? scheduledNotice(event.task) : 'Scheduled check-in (heartbeat).' };
  const demo: DemoState | null = event.kind === 'demo' ? { mission_id: event.mission_id, state: 'playing' } : view.demo;
  const scheduled = event.task ? { ...view.scheduled, [event.mission_id]: event.task } : view.scheduled;
  return { ...view, activeMissions: [...view.activeMissions, event.mission_id], chat: [...view.chat, entry], demo, scheduled };
}

function finishMission(view: StackView, event: EventOf<'mission_finished'>, key: string): StackView {
  const activeMissions = view.activeMissions.filter((id) => id !== event.mission_id);
  // A question nobody answered before the mission ended is moot now.
  let chat = view.chat.map((entry): ChatEntry => {
    if (entry.mission_id !== event.mission_id) return entry;
    // Stopped before its turn came: no longer waiting.
    if (entry.kind === 'user' && entry.queued) return { ...entry, queued: false };
    if (entry.kind === 'assistant' && entry.streaming) return { ...entry, streaming: false };
    if (entry.kind === 'permission' && entry.state === 'pending') return { ...entry, state: 'denied' };
    if (entry.kind === 'tool' && entry.status === 'running') return { ...entry, status: 'error', summary: entry.summary || 'Did not finish.' };
    return entry;
  });
  if (event.status === 'aborted') chat = insert(chat, { kind: 'notice', key, mission_id: event.mission_id, text: 'Stopped.' });
  if ((event.status === 'failed' || event.status === 'interrupted') && event.error) {
    // The user's own message can be sent again as it was (the demo's request is not theirs).
    const asked = view.chat.find((entry) => entry.kind === 'user' && entry.mission_id === event.mission_id);
    const retry_text = asked?.kind === 'user' && !asked.recorded ? asked.text : undefined;
    chat = insert(chat, { kind: 'error', key, mission_id: event.mission_id, code: event.error.code, text: event.error.message, ...(retry_text ? { retry_text } : {}) });
  }
  const spent = { tokens: tokensOf(event.usage), cost_usd: event.usage.cost_usd };
  if (spent.tokens > 0) chat = insert(chat, { kind: 'usage', key: `${key}u`, mission_id: event.mission_id, ...spent });
  const { [event.mission_id]: _done, ...live } = view.live;
  const subagents = endSubagents(view.subagents, event.mission_id, event.at);
  const demo: DemoState | null =
    view.demo?.mission_id === event.mission_id ? { ...view.demo, state: event.status === 'completed' ? 'finished' : event.status === 'aborted' ? 'stopped' : 'failed' } : view.demo;
  return { ...view, activeMissions, chat, session: addSpend(view.session, spent), live, demo, subagents };
}

/** What a mission's tools and hooks did, and the files it made, as chat entries. */
function applyToolEvent(view: StackView, event: EventOf<'tool_started' | 'tool_output' | 'tool_finished' | 'hook_ran' | 'file_ready'>): StackView {
  const key = `e${event.seq}`;
  switch (event.type) {
    case 'tool_started':
      return {
        ...view,
        chat: insert(view.chat, {
          kind: 'tool',
          key: event.tool_use_id,
          mission_id: event.mission_id,
          name: event.name,
          title: event.title,
          status: 'running',
          summary: '',
          detail: event.detail ?? '',
          output: emptyOutput,
          result: '',
          started_at: event.at,
          duration_ms: null,
        }),
      };
    case 'tool_output': {
      const at = view.chat.findLastIndex((entry) => entry.kind === 'tool' && entry.key === event.tool_use_id);
      const entry = view.chat[at];
      if (entry?.kind !== 'tool') return view;
      const chat = [...view.chat];
      chat[at] = { ...entry, output: appendOutput(entry.output, event.text) };
      return { ...view, chat };
    }
    case 'tool_finished':
      return {
        ...view,
        chat: view.chat.map((entry) =>
          entry.kind === 'tool' && entry.key === event.tool_use_id
            ? { ...entry, status: event.ok ? 'ok' : 'error', summary: event.summary, result: event.output ?? '', duration_ms: Math.max(0, event.at - entry.started_at) }
            : entry,
        ),
      };
    case 'hook_ran':
      return { ...view, chat: insert(view.chat, { kind: 'hook', key, mission_id: event.mission_id, ...(event.tool ? { tool: event.tool } : {}), run: event.run }) };
    case 'file_ready':
      return {
        ...view,
        chat: insert(view.chat, { kind: 'download', key, mission_id: event.mission_id ?? '', path: event.path, mime: event.mime, size: event.size }),
      };
    default:
      return assertNever(event, 'tool event');
  }
}

/** Questions asked of the user and what became of them. */
function applyPermissionEvent(view: StackView, event: EventOf<'permission_requested' | 'permission_decision' | 'permission_rules_changed'>): StackView {
  const key = `e${event.seq}`;
  switch (event.type) {
    case 'permission_requested':
      return {
        ...view,
        chat: insert(view.chat, { kind: 'permission', key, mission_id: event.mission_id, ask_id: event.ask_id, title: event.title, reason: event.reason, state: 'pending' }),
      };
    case 'permission_decision': {
      // An answered question updates its entry; a rule's refusal shows as a notice.
      const pending = view.chat.findIndex((entry) => entry.kind === 'permission' && entry.state === 'pending' && entry.mission_id === event.mission_id && entry.title === event.title);
      if (pending >= 0) {
        const chat = [...view.chat];
        chat[pending] = { ...(chat[pending] as Extract<ChatEntry, { kind: 'permission' }>), state: event.decision };
        return { ...view, chat };
      }
      if (event.decision === 'denied') {
        return { ...view, chat: insert(view.chat, { kind: 'notice', key, mission_id: event.mission_id, text: `Blocked: ${event.title}. ${event.reason ?? ''}`.trim() }) };
      }
      return view;
    }
    case 'permission_rules_changed':
      return view;
    default:
      return assertNever(event, 'permission event');
  }
}

/** An upload's way through the pipeline: added, pages read, ready or failed. */
function applyDocumentEvent(view: StackView, event: EventOf<'document_added' | 'document_progress' | 'document_updated'>): StackView {
  const key = `e${event.seq}`;
  switch (event.type) {
    case 'document_added':
      return {
        ...view,
        documents: { ...view.documents, [event.document.path]: { id: event.document.id, status: event.document.status, error: event.document.error ?? null } },
        chat: [
          ...view.chat,
          { kind: 'notice', key, mission_id: '', text: `Added ${event.document.filename} to documents/ (${event.document.description}).`, ...(event.window === false ? { document: event.document.path } : {}) },
        ],
      };
    case 'document_progress': {
      const progressKey = `p-${event.document_id}`;
      const entry: ChatEntry = { kind: 'notice', key: progressKey, mission_id: '', text: `Reading a document: ${event.page} of ${event.pages} pages read…` };
      const at = view.chat.findIndex((item) => item.key === progressKey);
      const path = Object.keys(view.documents).find((p) => view.documents[p]!.id === event.document_id);
      const documents = path ? { ...view.documents, [path]: { ...view.documents[path]!, progress: { page: event.page, pages: event.pages } } } : view.documents;
      return { ...view, documents, chat: at >= 0 ? view.chat.map((item, i) => (i === at ? entry : item)) : [...view.chat, entry] };
    }
    case 'document_updated': {
      const doc = event.document;
      const progressKey = `p-${doc.id}`;
      const chat = view.chat.filter((item) => item.key !== progressKey);
      if (doc.status === 'ready') chat.push({ kind: 'notice', key, mission_id: '', text: readNotice(doc.filename, doc.mime, doc.page_count ?? 1) });
      if (doc.status === 'failed') chat.push({ kind: 'error', key, mission_id: '', code: 'document_failed', text: doc.error ?? `${doc.filename} could not be read.` });
      return { ...view, chat, documents: { ...view.documents, [doc.path]: { id: doc.id, status: doc.status, error: doc.error ?? null } } };
    }
    default:
      return assertNever(event, 'document event');
  }
}

/** The task board: each subagent's state, spend and transcript. */
function applySubagentEvent(view: StackView, event: EventOf<'subagent_changed' | 'subagent_step'>): StackView {
  switch (event.type) {
    case 'subagent_changed': {
      const info = event.subagent;
      const before = view.subagents[info.id];
      // Its spend counts toward its mission's as it goes (the mission's usage includes it at the end).
      const added = { tokens: tokensOf(info.usage) - (before ? tokensOf(before.info.usage) : 0), cost_usd: info.usage.cost_usd === null ? null : info.usage.cost_usd - (before?.info.usage.cost_usd ?? 0) };
      const running = view.activeMissions.includes(info.mission_id);
      const live = running && added.tokens > 0 ? { ...view.live, [info.mission_id]: addSpend(view.live[info.mission_id] ?? { tokens: 0, cost_usd: 0 }, added) } : view.live;
      return { ...view, live, subagents: { ...view.subagents, [info.id]: { info, steps: before?.steps ?? [] } } };
    }
    case 'subagent_step': {
      const entry = view.subagents[event.subagent_id];
      if (!entry) return view;
      const step = event.step;
      const at = step.kind === 'tool' ? entry.steps.findIndex((s) => s.kind === 'tool' && s.tool_use_id === step.tool_use_id) : -1;
      const steps = at >= 0 ? entry.steps.map((s, i) => (i === at ? step : s)) : [...entry.steps, step].slice(-MAX_STEPS);
      return { ...view, subagents: { ...view.subagents, [event.subagent_id]: { ...entry, steps } } };
    }
    default:
      return assertNever(event, 'subagent event');
  }
}

/** The canvas's windows. */
function applyWindowEvent(view: StackView, event: EventOf<'window_opened' | 'window_patched' | 'window_closed'>): StackView {
  switch (event.type) {
    case 'window_opened':
      return { ...view, windows: [...view.windows.filter((w) => w.id !== event.window.id), event.window] };
    case 'window_patched':
      return {
        ...view,
        windows: view.windows.map((w) => (w.id === event.window_id ? applyWindowPatch(w, event.patch, event.updated_at) : w)),
      };
    case 'window_closed':
      return { ...view, windows: view.windows.filter((w) => w.id !== event.window_id) };
    default:
      return assertNever(event, 'window event');
  }
}

type StackStateEvent = EventOf<'settings_changed' | 'trust_changed' | 'model_status' | 'computer_status' | 'mcp_changed' | 'task_changed' | 'task_removed' | 'checkpoint_taken' | 'checkpoint_failed'>;

/** The stack's state as its latest event says: settings, trust, model, computer, MCP, tasks, checkpoints. */
function applyStackStateEvent(view: StackView, event: StackStateEvent): StackView {
  switch (event.type) {
    case 'settings_changed':
      return { ...view, settings: event.settings };
    case 'trust_changed':
      return { ...view, trust: event.trust };
    case 'model_status':
      return { ...view, model: event.status };
    case 'computer_status':
      return { ...view, computer: event.status };
    case 'mcp_changed':
      return { ...view, mcp: event.mcp };
    case 'task_changed':
      return { ...view, tasks: { ...view.tasks, [event.task.id]: { seq: event.seq, task: event.task } } };
    case 'task_removed':
      return { ...view, tasks: { ...view.tasks, [event.task_id]: { seq: event.seq, task: null } } };
    case 'checkpoint_taken':
      return { ...view, checkpointSeq: event.seq };
    case 'checkpoint_failed':
      return event.mission_id
        ? { ...view, chat: insert(view.chat, { kind: 'notice', key: `e${event.seq}`, mission_id: event.mission_id, text: checkpointFailedText(event.error.message) }) }
        : view;
    default:
      return assertNever(event, 'stack state event');
  }
}

/** A mission ended: its subagents still waiting or running (the page went away meanwhile) ended with it. */
function endSubagents(subagents: StackView['subagents'], missionId: string, at: number): StackView['subagents'] {
  const open = Object.values(subagents).filter(({ info }) => info.mission_id === missionId && (info.status === 'waiting' || info.status === 'running'));
  if (!open.length) return subagents;
  const next = { ...subagents };
  for (const { info, steps } of open) next[info.id] = { steps, info: { ...info, status: 'cancelled', activity: 'Ended with its mission', error: info.error ?? 'Its mission ended first.', finished_at: at } };
  return next;
}

/** The chat's line for a document the pipeline has read: pages, a workbook's sheets, a Word document's text. */
export function readNotice(filename: string, mime: string, count: number): string {
  if (mime.includes('spreadsheetml')) return `Read ${filename}: ${count} sheet${count === 1 ? '' : 's'}, each a table and a CSV.`;
  if (mime.includes('wordprocessingml')) return `Read ${filename}: its text, headings and tables.`;
  return `Read ${filename}: ${count} page${count === 1 ? '' : 's'} of text.`;
}

/** The chat's line for a scheduled task's run. */
export function scheduledNotice(task: MissionTask | undefined): string {
  if (!task) return 'Scheduled task.';
  const notes = [task.missed ? 'missed while the app was closed, run now' : '', task.attempt > 1 ? `try ${task.attempt} of ${task.of}` : ''].filter(Boolean);
  return `Scheduled task "${task.title}"${notes.length ? ` (${notes.join('; ')})` : ''}.`;
}

/** The tasks to show: the list as fetched at `fetchedSeq`, with every later task event applied. */
export function mergeTasks(fetched: TaskInfo[], fetchedSeq: number, events: StackView['tasks']): TaskInfo[] {
  const byId = new Map(fetched.map((task) => [task.id, task]));
  for (const [id, { seq, task }] of Object.entries(events)) {
    if (seq <= fetchedSeq) continue;
    if (task) byId.set(id, task);
    else byId.delete(id);
  }
  return [...byId.values()].sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id));
}
