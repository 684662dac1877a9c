// One stack: its settings, canvas, event log and missions, behind the StackApi protocol.
// Framework-free and DOM-free; the worker entry wires it to OPFS, fetch and comlink.
import { runAgentLoop } from './agent/loop.ts';
import { toErrorShape } from './agent/errors.ts';
import { emptyUsage } from './agent/pricing.ts';
import { applySummary, DEFAULT_POLICY, findCut, needsCompaction, summarise, transcriptOf, type CompactionPolicy } from './agent/compaction.ts';
import { systemPrompt } from './agent/system-prompt.ts';
import type { LoopEvent, MessageParam, StreamFn } from './agent/types.ts';
import { CanvasError, loadCanvas } from './canvas.ts';
import { createEventLog } from './event-log.ts';
import { checkModel as checkModelConnection, type ModelConnection } from './model-health.ts';
import {
  assertNever,
  type ErrorShape,
  type EventListener,
  type Method,
  type MissionKind,
  type ModelStatus,
  type ResultOf,
  type Settings,
  type StackApi,
  type StackRequest,
  type StackResponse,
} from './protocol.ts';
import { DEFAULT_ENDPOINTS, loadApiKey, loadSettings, mergeSettings, saveApiKey, saveSettings, SettingsError } from './settings.ts';
import type { StackStorage } from './storage.ts';
import { ZodError } from 'zod';
import { loadPermissionGate, PermissionError } from './permissions/gate.ts';
import { createAddPermissionRuleTool } from './tools/add-permission-rule.ts';
import { createExportFileTool } from './tools/export-file.ts';
import { EXPORT_MIME, exportFileName, exportTable } from './export/table-export.ts';
import { createCloseWindowTool } from './tools/close-window.ts';
import { createCreateWindowTool } from './tools/create-window.ts';
import { createEditTool } from './tools/edit.ts';
import { createGlobTool } from './tools/glob.ts';
import { createGrepTool } from './tools/grep.ts';
import { createReadTool } from './tools/read.ts';
import { createUpdateWindowTool } from './tools/update-window.ts';
import { createWriteTool } from './tools/write.ts';
import { UserPathError, type UserFiles } from './user-files.ts';

export interface StackDeps {
  storage: StackStorage;
  files: UserFiles;
  defaults: Settings;
  fetch: typeof fetch;
  /** Builds the model stream for a connection; swapped for a fake in unit tests. */
  createStream(connection: ModelConnection): StreamFn;
  newId?: (prefix: string) => string;
  maxRetries?: number;
  compaction?: CompactionPolicy;
  /** Runs before older turns are summarised away (the memory's pre-compaction flush). Must not throw. */
  beforeCompaction?: () => Promise<void>;
}

const HEARTBEAT_PROMPT =
  'This is a scheduled heartbeat, not a message from the user. Review pending actions and anything ' +
  'that needs doing now. If nothing does, reply with exactly HEARTBEAT_OK and do nothing else.';

class RequestError extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
  }
}

export async function createStack(deps: StackDeps): Promise<StackApi> {
  const newId = deps.newId ?? ((prefix: string) => `${prefix}_${crypto.randomUUID().slice(0, 12)}`);
  const log = createEventLog();
  const emit = log.append;
  let settings = await loadSettings(deps.storage, deps.defaults);
  const connection = async (): Promise<ModelConnection> => ({
    provider: settings.provider,
    endpoint: settings.endpoint,
    apiKey: settings.provider === 'proxy' ? null : await loadApiKey(deps.storage),
  });
  let model: ModelStatus = { state: 'unknown' };
  const canvas = await loadCanvas(deps.storage, emit, () => newId('w'));
  const gate = await loadPermissionGate(deps.storage, emit, newId);
  const fileType = async (path: string) => (await deps.files.stat(path))?.mime ?? null;
  const tools = [
    createCreateWindowTool({ openWindow: canvas.openWindow, get: canvas.get, fileType }),
    createUpdateWindowTool(canvas),
    createCloseWindowTool(canvas),
    createReadTool(deps.files),
    createWriteTool(deps.files),
    createEditTool(deps.files),
    createGlobTool(deps.files),
    createGrepTool(deps.files),
    createAddPermissionRuleTool(gate),
    createExportFileTool({
      get: canvas.get,
      files: deps.files,
      offerDownload: (file) => emit({ type: 'file_ready', mission_id: currentMission, ...file }),
    }),
  ];

  // Missions run one at a time, in the order they arrived.
  let lock: Promise<void> = Promise.resolve();
  let history: MessageParam[] = [];
  let lastPromptTokens = 0;
  const policy = deps.compaction ?? DEFAULT_POLICY;

  /** Summarises older turns when the last prompt came near the context window. Never throws. */
  async function compactIfNeeded(missionId: string, stream: StreamFn, messages: MessageParam[], promptTokens: number, signal: AbortSignal) {
    if (!needsCompaction(promptTokens, policy)) return null;
    const cut = findCut(messages, policy.keepRecent);
    if (cut < 0) return null;
    try {
      await deps.beforeCompaction?.();
      const summary = await summarise(stream, settings.model, transcriptOf(messages.slice(0, cut)), signal);
      emit({ type: 'context_compacted', mission_id: missionId, removed_messages: cut, prompt_tokens: promptTokens });
      return applySummary(messages, cut, summary);
    } catch {
      // Going on uncompacted is better than failing the mission; the model says if it overflows.
      return null;
    }
  }
  const running = new Map<string, AbortController>();
  /** The mission whose tools are running now (missions are serialised), for events they cause. */
  let currentMission: string | null = null;

  // The heartbeat wakes the agent on its own every few minutes, when the user turned it on.
  let heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  function scheduleHeartbeat() {
    clearInterval(heartbeatTimer);
    heartbeatTimer = undefined;
    if (settings.heartbeat_minutes <= 0) return;
    heartbeatTimer = setInterval(() => {
      // Never pile heartbeats up behind a long mission.
      if (running.size === 0) startMission(newId('hb'), HEARTBEAT_PROMPT, 'heartbeat');
    }, settings.heartbeat_minutes * 60_000);
  }

  async function checkModel(): Promise<ModelStatus> {
    model = await checkModelConnection(await connection(), deps.fetch);
    emit({ type: 'model_status', status: model });
    return model;
  }

  /** Missions and heartbeats wait their turn behind one lock; the queue is visible as events. */
  function startMission(requestId: string, text: string, kind: MissionKind = 'chat'): string {
    const missionId = newId('m');
    const controller = new AbortController();
    emit({ type: 'mission_queued', mission_id: missionId, request_id: requestId, kind, text, position: running.size });
    running.set(missionId, controller);
    lock = lock.then(() => runMission(missionId, requestId, text, kind, controller));
    return missionId;
  }

  async function runMission(missionId: string, requestId: string, text: string, kind: MissionKind, controller: AbortController) {
    emit({ type: 'mission_started', mission_id: missionId, request_id: requestId, kind, text });
    currentMission = missionId;
    try {
      if (controller.signal.aborted) {
        emit({ type: 'mission_finished', mission_id: missionId, status: 'aborted', usage: emptyUsage() });
        return;
      }
      const stream = deps.createStream(await connection());
      const outcome = await runAgentLoop({
        stream,
        promptTokens: lastPromptTokens,
        compact: (messages, promptTokens, signal) => compactIfNeeded(missionId, stream, messages, promptTokens, signal),
        tools,
        model: settings.model,
        system: systemPrompt({ canvas: canvas.describe() }),
        messages: withUserText(history, withInteractions(canvas.takeInteractionNotes(), text)),
        signal: controller.signal,
        onEvent: (event) => forwardLoopEvent(missionId, event),
        authorize: (call, signal) => gate.check({ mission_id: missionId, tool: call.name, title: call.title, input: call.input }, signal),
        ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
      });
      history = outcome.messages;
      lastPromptTokens = outcome.promptTokens;
      const error = outcome.status === 'failed' ? outcome.error : undefined;
      emit({ type: 'mission_finished', mission_id: missionId, status: outcome.status, usage: outcome.usage, ...(error ? { error } : {}) });
      if (error?.code === 'model_not_configured' || error?.code === 'model_unreachable') void checkModel();
    } catch (error) {
      emit({ type: 'mission_finished', mission_id: missionId, status: 'failed', usage: emptyUsage(), error: toErrorShape(error) });
    } finally {
      running.delete(missionId);
      currentMission = null;
    }
  }

  function forwardLoopEvent(missionId: string, event: LoopEvent) {
    const mission_id = missionId;
    switch (event.type) {
      case 'text_delta':
        return emit({ type: 'assistant_delta', mission_id, text: event.text });
      case 'message_end':
        return emit({ type: 'assistant_message_end', mission_id, stop_reason: event.stop_reason, usage: event.usage });
      case 'tool_started':
        return emit({ type: 'tool_started', mission_id, tool_use_id: event.tool_use_id, name: event.name, title: event.title });
      case 'tool_finished':
        return emit({
          type: 'tool_finished',
          mission_id,
          tool_use_id: event.tool_use_id,
          name: event.name,
          ok: !event.result.is_error,
          summary: event.result.content.slice(0, 500),
        });
      case 'retry':
        return emit({ type: 'model_retry', mission_id, attempt: event.attempt, delay_ms: event.delay_ms, reason: event.reason });
      default:
        return assertNever(event, 'loop event');
    }
  }

  async function handle<M extends Method>(request: StackRequest<M>): Promise<ResultOf<M>> {
    // Narrowing a generic request needs the union view; each branch returns its own result type.
    const req = request as StackRequest;
    switch (req.method) {
      case 'mission': {
        const text = typeof req.params?.text === 'string' ? req.params.text.trim() : '';
        if (!text) throw new RequestError({ code: 'bad_request', message: 'A mission needs some text.' });
        return { mission_id: startMission(req.id, text) } as ResultOf<M>;
      }
      case 'heartbeat':
        return { mission_id: startMission(req.id, HEARTBEAT_PROMPT, 'heartbeat') } as ResultOf<M>;
      case 'abort': {
        const targets = req.params?.mission_id ? [req.params.mission_id] : [...running.keys()];
        let aborted = false;
        for (const id of targets) {
          const controller = running.get(id);
          if (controller && !controller.signal.aborted) {
            controller.abort();
            aborted = true;
          }
        }
        return { aborted } as ResultOf<M>;
      }
      case 'get_settings':
        return settings as ResultOf<M>;
      case 'update_settings': {
        const patch = req.params ?? {};
        const next = mergeSettings(settings, patch);
        // Switching provider without naming an endpoint moves to that provider's usual one.
        if (patch.provider && patch.provider !== settings.provider && patch.endpoint === undefined) {
          next.endpoint = patch.provider === 'proxy' ? deps.defaults.endpoint : DEFAULT_ENDPOINTS[patch.provider];
        }
        if (patch.api_key !== undefined) {
          await saveApiKey(deps.storage, patch.api_key);
          next.has_api_key = (await loadApiKey(deps.storage)) !== null;
        }
        const endpointChanged = next.endpoint !== settings.endpoint || next.provider !== settings.provider || patch.api_key !== undefined;
        settings = next;
        await saveSettings(deps.storage, settings);
        emit({ type: 'settings_changed', settings });
        if (endpointChanged) void checkModel();
        scheduleHeartbeat();
        return settings as ResultOf<M>;
      }
      case 'check_model':
        return (await checkModel()) as ResultOf<M>;
      case 'canvas_interaction':
        await canvas.interact(req.params);
        return {} as ResultOf<M>;
      case 'answer_permission':
        return { answered: gate.answer(req.params.ask_id, req.params.allow === true) } as ResultOf<M>;
      case 'list_permission_rules':
        return gate.rules() as ResultOf<M>;
      case 'add_permission_rule':
        return (await gate.addRule(req.params, 'user')) as ResultOf<M>;
      case 'remove_permission_rule':
        await gate.removeRule(req.params.rule_id);
        return {} as ResultOf<M>;
      case 'export_window': {
        const table = canvas.get(req.params.window_id);
        if (!table || table.kind !== 'table') throw new RequestError({ code: 'not_found', message: `No table window ${req.params.window_id}.` });
        const format = req.params.format;
        if (!(format in EXPORT_MIME)) throw new RequestError({ code: 'bad_request', message: 'The format must be csv, json or xlsx.' });
        return { filename: exportFileName(table.title, format), mime: EXPORT_MIME[format], bytes: await exportTable(table, format) } as ResultOf<M>;
      }
      case 'read_file': {
        const info = await deps.files.stat(req.params.path);
        if (!info) throw new RequestError({ code: 'not_found', message: `There is no file at ${req.params.path}.` });
        return { ...info, bytes: await deps.files.read(info.path) } as ResultOf<M>;
      }
      default:
        return assertNever(req, 'request');
    }
  }

  void checkModel();
  scheduleHeartbeat();

  return {
    async request<M extends Method>(request: StackRequest<M>): Promise<StackResponse<M>> {
      const requestId = typeof request?.id === 'string' ? request.id : '';
      if (!requestId || typeof request.method !== 'string') {
        return { request_id: requestId, ok: false, error: { code: 'bad_request', message: 'A request needs an id and a method.' } };
      }
      try {
        return { request_id: requestId, ok: true, result: await handle(request) };
      } catch (error) {
        return { request_id: requestId, ok: false, error: describeRequestError(error, request.method) };
      }
    },

    async subscribe(afterSeq: number, listener: EventListener) {
      const backlog = log.since(afterSeq);
      let delivered = backlog.at(-1)?.seq ?? afterSeq;
      if (backlog.length) listener(backlog);
      log.subscribe((batch) => {
        const fresh = batch.filter((event) => event.seq > delivered);
        if (!fresh.length) return;
        delivered = fresh.at(-1)!.seq;
        listener(fresh);
      });
      return { last_seq: delivered };
    },

    async snapshot() {
      return { windows: canvas.windows(), settings, model, last_seq: log.lastSeq };
    },
  };
}

/** What the user did on the canvas since the last turn goes before their message, as context. */
function withInteractions(notes: string[], text: string): string {
  if (notes.length === 0) return text;
  return `<canvas_interactions>\n${notes.map((note) => `- ${note}`).join('\n')}\n</canvas_interactions>\n\n${text}`;
}

/** The user's new text joins a trailing user turn (e.g. tool results of a stopped mission). */
function withUserText(history: MessageParam[], text: string): MessageParam[] {
  const last = history.at(-1);
  if (last?.role !== 'user') return [...history, { role: 'user', content: text }];
  const content = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
  return [...history.slice(0, -1), { role: 'user', content: [...content, { type: 'text', text }] }];
}

function describeRequestError(error: unknown, method: string): ErrorShape {
  if (error instanceof RequestError) return error.shape;
  if (error instanceof SettingsError || error instanceof CanvasError || error instanceof UserPathError || error instanceof PermissionError) {
    return { code: 'bad_request', message: error.message };
  }
  if (error instanceof ZodError) {
    return { code: 'bad_request', message: error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ') };
  }
  if (error instanceof DOMException && error.name === 'QuotaExceededError') {
    return { code: 'storage', message: 'The browser ran out of storage for this stack. Free some space and try again.' };
  }
  const shape = toErrorShape(error);
  return { ...shape, message: `${method} failed: ${shape.message}` };
}
