// One stack: its settings, canvas, memory, event log and missions, behind the StackApi protocol.
// Framework-free and DOM-free; the worker entry wires it to OPFS, fetch and comlink.
import { ZodError } from 'zod';
import { DbError, DEFAULT_PROCESSOR_MODEL, toDbErrorShape, type DocumentRecord, type StackMemory } from '../memory/index.ts';
import type { CompactionPolicy } from './agent/compaction.ts';
import { toErrorShape } from './agent/errors.ts';
import { emptyUsage } from './agent/pricing.ts';
import type { StreamFn } from './agent/types.ts';
import { startAgentMemory } from './agent-memory.ts';
import { CanvasError, loadCanvas } from './canvas.ts';
import { loadConversation } from './conversation.ts';
import { openEventLog, type EventLog, type EventStore } from './event-log.ts';
import { EXPORT_MIME, exportFileName, exportTable } from './export/table-export.ts';
import type { OcrEngine } from './documents/ocr.ts';
import type { PdfOpener, PdfPageRenderer } from './documents/pdf-text.ts';
import { createPipeline } from './documents/pipeline.ts';
import { checkUpload, uniqueName, UploadError } from './documents/upload.ts';
import { DEMO_REQUEST, recordedDemoStream } from './demo/demo.ts';
import { HooksError, loadHooks } from './hooks.ts';
import { createMissions, HEARTBEAT_PROMPT } from './missions.ts';
import { isStorageFull, noRoomMessage, storageEstimate, storageFullMessage, storageUsage } from './storage-full.ts';
import { checkModel as checkModelConnection, type ModelConnection } from './model-health.ts';
import { loadPermissionGate, PermissionError } from './permissions/gate.ts';
import {
  assertNever,
  SAMPLE_DOCUMENTS,
  type ComputerStatus,
  type DocumentInfo,
  type ErrorShape,
  type EventListener,
  type Method,
  type ModelStatus,
  type ResultOf,
  type Settings,
  type StackApi,
  type StackEventBody,
  type StackRequest,
  type StackResponse,
} from './protocol.ts';
import { DEFAULT_ENDPOINTS, loadApiKey, loadSettings, mergeSettings, saveApiKey, saveSettings, SettingsError } from './settings.ts';
import { createMemoryStorage, type StackStorage } from './storage.ts';
import { deviceCredentials, pairDevice, PairingError, type DeviceCredentials } from './device.ts';
import { createAddPermissionRuleTool } from './tools/add-permission-rule.ts';
import { createBashTool } from './tools/bash.ts';
import { ComputerUnavailableError, type Computer, type ComputerNetwork } from './computer.ts';
import type { VmNetwork } from '../vm/protocol.ts';
import { createCloseWindowTool } from './tools/close-window.ts';
import { createCreateWindowTool } from './tools/create-window.ts';
import { createEditTool } from './tools/edit.ts';
import { createExportFileTool } from './tools/export-file.ts';
import { createGlobTool } from './tools/glob.ts';
import { createGrepTool } from './tools/grep.ts';
import { createReadOcrTool } from './tools/read-ocr.ts';
import { createReadTool } from './tools/read.ts';
import { createSaveExtractionTool } from './tools/save-extraction.ts';
import { createSearchMemoryTool } from './tools/search-memory.ts';
import { createUpdateWindowTool } from './tools/update-window.ts';
import { createProxyFetchPage, createWebFetchTool } from './tools/web-fetch.ts';
import { createProxySearch, createWebSearchTool } from './tools/web-search.ts';
import { createWriteTool } from './tools/write.ts';
import { normaliseUserPath, UserPathError, type UserFiles } from './user-files.ts';

export interface StackDeps {
  storage: StackStorage;
  files: UserFiles;
  /** The stack's databases and memory files (memory/). */
  memory: StackMemory;
  defaults: Settings;
  fetch: typeof fetch;
  /** Builds the model stream for a connection; swapped for a fake in unit tests. */
  createStream(connection: ModelConnection): StreamFn;
  /** pdfjs, in its own worker in the browser; in-process in Node tests. */
  openPdf: PdfOpener;
  /** tesseract.js with the app's own English data. */
  ocr: OcrEngine;
  /** Draws a scanned PDF's pages for OCR (browser only). */
  renderPdfPages?: PdfPageRenderer;
  /**
   * Makes the stack's Linux computer (vm/), given where its status goes and how it reaches the
   * network (the proxy's relay, for a paired device, unless turned off in Settings); absent in
   * tests, then bash says so.
   */
  createComputer?: (emitStatus: (status: ComputerStatus) => void, network: () => Promise<ComputerNetwork>) => Computer;
  newId?: (prefix: string) => string;
  /** This browser's proxy credentials, shared by its stacks; in memory when absent (tests). */
  credentials?: DeviceCredentials;
  /** The name this browser pairs under, e.g. "Stackdocs in Chrome on Linux". */
  deviceLabel?: string;
  /** A new playing of the recorded demo; tests play it without the human pace. */
  demoStream?: () => StreamFn;
  maxRetries?: number;
  compaction?: CompactionPolicy;
  /** Consistent copies of both databases for an export (`.os/snapshot/`), replacing older ones. */
  snapshotDatabases?: () => Promise<void>;
}

class RequestError extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
  }
}

export async function createStack(deps: StackDeps): Promise<StackApi> {
  const newId = deps.newId ?? ((prefix: string) => `${prefix}_${crypto.randomUUID().slice(0, 12)}`);
  // A batch that cannot be stored (the disk is full) stops the work that is producing it: an
  // answer the user reads now but that is gone after a reload would be a loss they were not told of.
  let stopForStorage: (error: unknown) => void = () => {};
  const log = await openEventLog({ store: deps.memory.transcript as EventStore, onStoreError: (error) => stopForStorage(error) });
  const emit = log.append;
  let settings = await loadSettings(deps.storage, deps.defaults);
  const credentials = deps.credentials ?? deviceCredentials(createMemoryStorage());
  // The computer's network: through the proxy, for a paired device, with a ticket for the relay
  // and the resolver only (never the device token), unless the user turned it off for this stack.
  // Asked at each start of the computer. Without one, says why (the guest's [network] lines repeat it).
  let ticket: { network: VmNetwork; expires: number } | null = null;
  async function computerNetwork(): Promise<ComputerNetwork> {
    if (!settings.computer_network) return { network: null, offline: 'its network is turned off for this stack in Settings' };
    if (settings.provider !== 'proxy') return { network: null, offline: 'it reaches the internet only through a Stackdocs proxy; choose one in Settings' };
    const token = await deviceToken();
    if (!token) return { network: null, offline: 'this device is not paired with the proxy; pair it in Settings' };
    const endpoint = settings.endpoint.replace(/\/+$/, '');
    if (ticket && ticket.expires > Date.now() + 3_600_000 && ticket.network.dnsUrl === `${endpoint}/dns-query`) return { network: ticket.network };
    let response: Response;
    try {
      response = await deps.fetch(`${endpoint}/v1/net/ticket`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, credentials: 'omit', signal: AbortSignal.timeout(10_000) });
    } catch {
      return { network: null, offline: 'the proxy could not be reached when it started' };
    }
    if (response.status === 401) return { network: null, offline: 'the proxy no longer accepts this device; pair it again in Settings' };
    if (!response.ok) return { network: null, offline: `the proxy refused it a network ticket (HTTP ${response.status})` };
    const body = (await response.json()) as { ticket: string; expires_at: string; wisp_path: string; dns_path: string };
    const network = { relayUrl: `${endpoint.replace(/^http/, 'ws')}${body.wisp_path}?ticket=${encodeURIComponent(body.ticket)}`, dnsUrl: `${endpoint}${body.dns_path}`, ticket: body.ticket };
    ticket = { network, expires: Date.parse(body.expires_at) };
    return { network };
  }
  const deviceToken = async () => (settings.provider === 'proxy' ? ((await credentials.get(settings.endpoint))?.token ?? null) : null);
  const connection = async (): Promise<ModelConnection> => ({
    provider: settings.provider,
    endpoint: settings.endpoint,
    apiKey: settings.provider === 'proxy' ? null : await loadApiKey(deps.storage),
    deviceToken: await deviceToken(),
  });
  // Calls to the proxy (web pages, OCR) carry this device's token; nothing else does.
  const proxyFetch: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const token = await deviceToken();
    if (!token || !url.startsWith(`${settings.endpoint.replace(/\/+$/, '')}/`)) return deps.fetch(input, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return deps.fetch(input, { ...init, headers });
  };
  let model: ModelStatus = { state: 'unknown' };
  const canvas = await loadCanvas(deps.storage, emit, () => newId('w'));
  const gate = await loadPermissionGate(deps.storage, emit, newId);
  const conversation = await loadConversation(deps.storage);
  await closeInterruptedMissions(log, emit);
  const stream = async () => deps.createStream(await connection());
  const memory = await startAgentMemory({
    memory: deps.memory,
    stream,
    // A local server has only the model the user named; Anthropic has the cheap one.
    processorModel: () => (settings.provider === 'openai' ? settings.model : DEFAULT_PROCESSOR_MODEL),
  });
  const computer = deps.createComputer?.((status) => emit({ type: 'computer_status', status }), computerNetwork);
  // Every file the stack worker writes or removes also reaches /workspace in the computer.
  const files = computer ? notifyingFiles(deps.files, (path) => computer.workspaceChanged(path)) : deps.files;
  const toolOutput = createOutputCoalescer((tool_use_id, stream, text) => emit({ type: 'tool_output', mission_id: missions.current ?? '', tool_use_id, stream, text }));
  const pipeline = createPipeline({
    files,
    documents: deps.memory.documents,
    emit,
    openPdf: deps.openPdf,
    ocr: deps.ocr,
    toInfo: toDocumentInfo,
    ...(deps.renderPdfPages ? { renderPdfPages: deps.renderPdfPages } : {}),
    // Scans go to Mistral OCR through the proxy when the user chose it in the settings.
    mistralOcr: { settings: () => settings, fetch: proxyFetch },
  });
  const fileType = async (path: string) => (await files.stat(path))?.mime ?? null;
  const tools = [
    createCreateWindowTool({ openWindow: canvas.openWindow, get: canvas.get, fileType }),
    createUpdateWindowTool(canvas),
    createCloseWindowTool(canvas),
    createBashTool({
      exec: async (request, options) => {
        if (!computer) throw new ComputerUnavailableError('This stack has no computer: bash cannot run here.');
        return computer.exec(request, options);
      },
      output: toolOutput.push,
      saveOutput: async (toolUseId, text) => (await files.write(`artifacts/tool-output/${toolUseId}.txt`, text)).path,
    }),
    createReadTool(files),
    createWriteTool(files),
    createEditTool(files),
    createGlobTool(files),
    createGrepTool(files),
    createSearchMemoryTool(memory.search),
    createReadOcrTool({ findDocument: (nameOrId) => findDocument(deps.memory, nameOrId), files: files }),
    createSaveExtractionTool({
      findDocument: (nameOrId) => findDocument(deps.memory, nameOrId),
      documents: deps.memory.documents,
      get: canvas.get,
      windows: canvas.windows,
      openWindow: canvas.openWindow,
      patchWindow: canvas.patchWindow,
    }),
    createWebFetchTool({ fetchPage: createProxyFetchPage(() => (settings.provider === 'proxy' ? settings.endpoint : null), proxyFetch) }),
    createWebSearchTool({ search: createProxySearch({ endpoint: () => (settings.provider === 'proxy' ? settings.endpoint : null), fetch: proxyFetch }) }),
    createAddPermissionRuleTool(gate),
    createExportFileTool({
      get: canvas.get,
      files: files,
      offerDownload: (file) => emit({ type: 'file_ready', mission_id: missions.current, ...file }),
    }),
  ];
  // The user's hooks run in the computer, like the bash tool's commands.
  const hooks = await loadHooks({
    storage: deps.storage,
    emit,
    exec: async (request, signal) => {
      if (!computer) throw new ComputerUnavailableError('this stack has no computer to run hooks on');
      return computer.exec(request, { signal });
    },
  });
  const missions = createMissions({
    emit,
    newId,
    tools,
    canvas,
    gate,
    hooks,
    memory,
    conversation,
    stream,
    model: () => settings.model,
    attachments: () => attachmentIndex(deps.memory),
    onModelTrouble: () => void checkModel(),
    // The demo reads the samples once the pipeline has read them (an OCR may still be running).
    demo: { stream: deps.demoStream ?? (() => recordedDemoStream()), ready: () => pipeline.idle() },
    ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
    ...(deps.compaction ? { compaction: deps.compaction } : {}),
  });

  // The heartbeat wakes the agent on its own every few minutes, when the user turned it on.
  let heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  function scheduleHeartbeat() {
    clearInterval(heartbeatTimer);
    heartbeatTimer = undefined;
    if (settings.heartbeat_minutes <= 0) return;
    heartbeatTimer = setInterval(() => {
      // Never pile heartbeats up behind a long mission.
      if (missions.active === 0) missions.start(newId('hb'), HEARTBEAT_PROMPT, 'heartbeat');
    }, settings.heartbeat_minutes * 60_000);
  }

  // One check at a time: a local pairing must not happen twice at once.
  let checking: Promise<unknown> = Promise.resolve();
  function checkModel(): Promise<ModelStatus> {
    const next = checking.then(async () => {
      let status = await checkModelConnection(await connection(), deps.fetch);
      // The local proxy of `npm start` pairs the app it serves by itself.
      if (status.state === 'not_configured' && status.pairing === 'local') {
        const endpoint = settings.endpoint;
        const credential = await pairDevice(endpoint, null, deps.deviceLabel ?? 'Stackdocs', deps.fetch).catch(() => null);
        if (credential) {
          await credentials.set(endpoint, credential);
          status = await checkModelConnection(await connection(), deps.fetch);
        }
      }
      model = status;
      emit({ type: 'model_status', status: model });
      return model;
    });
    checking = next.catch(() => {});
    return next;
  }

  async function handle<M extends Method>(request: StackRequest<M>): Promise<ResultOf<M>> {
    // Narrowing a generic request needs the union view; each branch returns its own result type.
    const req = request as StackRequest;
    switch (req.method) {
      case 'mission': {
        const text = typeof req.params?.text === 'string' ? req.params.text.trim() : '';
        if (!text) throw new RequestError({ code: 'bad_request', message: 'A mission needs some text.' });
        return { mission_id: missions.start(req.id, text) } as ResultOf<M>;
      }
      case 'heartbeat':
        return { mission_id: missions.start(req.id, HEARTBEAT_PROMPT, 'heartbeat') } as ResultOf<M>;
      case 'play_demo': {
        if (missions.active > 0) throw new RequestError({ code: 'busy', message: 'Wait for the running request to finish (or stop it), then play the demo.' });
        // Never mixed with a model: with one connected, the user asks it instead.
        if ((await checkModel()).state === 'ready') {
          throw new RequestError({ code: 'demo_unavailable', message: 'A model is connected, so the recorded demo does not play: ask the model yourself, e.g. "Extract these invoices into a table".' });
        }
        const documents = await deps.memory.documents.listDocuments(1000);
        const missing = SAMPLE_DOCUMENTS.filter((name) => !documents.some((doc) => doc.path === `documents/${name}`));
        if (missing.length > 0) {
          throw new RequestError({ code: 'bad_request', message: `The recorded demo reads the sample documents, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in this stack. Add them with "Try it with sample documents".` });
        }
        return { mission_id: missions.start(req.id, DEMO_REQUEST, 'demo') } as ResultOf<M>;
      }
      case 'abort':
        return { aborted: missions.abort(req.params?.mission_id) } as ResultOf<M>;
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
      case 'pair_device': {
        if (settings.provider !== 'proxy') throw new RequestError({ code: 'bad_request', message: 'Pairing is for the Stackdocs proxy: choose it in Settings first.' });
        const code = typeof req.params?.code === 'string' ? req.params.code.trim() : '';
        if (!code) throw new RequestError({ code: 'bad_request', message: 'Enter the pairing code the proxy\'s owner gave you (`npm run pair` prints one).' });
        const endpoint = settings.endpoint;
        try {
          await credentials.set(endpoint, await pairDevice(endpoint, code, deps.deviceLabel ?? 'Stackdocs', deps.fetch));
        } catch (error) {
          if (error instanceof PairingError) throw new RequestError({ code: 'bad_request', message: error.message });
          throw error;
        }
        return (await checkModel()) as ResultOf<M>;
      }
      case 'unpair_device':
        await credentials.set(settings.endpoint, null);
        return (await checkModel()) as ResultOf<M>;
      case 'canvas_interaction':
        await canvas.interact(req.params);
        return {} as ResultOf<M>;
      case 'open_window': {
        const kind = req.params?.kind === 'terminal' ? 'terminal' : 'notes';
        const fallback = kind === 'terminal' ? 'Terminal' : 'Untitled notes';
        const title = typeof req.params?.title === 'string' && req.params.title.trim() ? req.params.title.trim().slice(0, 120) : fallback;
        if (kind === 'terminal') {
          // One terminal is enough: the serial console is a single shell.
          const existing = canvas.windows().find((w) => w.kind === 'terminal');
          if (existing) return existing as ResultOf<M>;
          void computer?.start();
        }
        const opened = await canvas.openWindow(kind === 'terminal' ? { kind, title } : { kind, title, content: '' });
        await canvas.interact({ type: 'window_opened_by_user', window_id: opened.id });
        return opened as ResultOf<M>;
      }
      case 'answer_permission':
        return { answered: gate.answer(req.params.ask_id, req.params.allow === true) } as ResultOf<M>;
      case 'list_permission_rules':
        return gate.rules() as ResultOf<M>;
      case 'add_permission_rule':
        return (await gate.addRule(req.params, 'user')) as ResultOf<M>;
      case 'remove_permission_rule':
        await gate.removeRule(req.params.rule_id);
        return {} as ResultOf<M>;
      case 'get_hooks':
        return hooks.info() as ResultOf<M>;
      case 'save_hooks': {
        if (typeof req.params?.text !== 'string') throw new RequestError({ code: 'bad_request', message: 'Hooks are saved as the text of their JSON file.' });
        try {
          return (await hooks.save(req.params.text)) as ResultOf<M>;
        } catch (error) {
          if (error instanceof HooksError) throw new RequestError({ code: 'bad_request', message: error.message });
          throw error;
        }
      }
      case 'learn_now': {
        const outcome = await memory.learnNow();
        const processed = outcome.batches.flatMap((batch) => (batch.status === 'processed' ? [batch] : []));
        const failure = outcome.batches.find((batch) => batch.status === 'failed');
        return {
          status: outcome.status,
          learnings: processed.reduce((sum, batch) => sum + batch.learnings, 0),
          files: [...new Set(processed.flatMap((batch) => batch.files))],
          remaining: outcome.remaining,
          ...(failure?.status === 'failed' ? { error: failure.message } : {}),
        } as ResultOf<M>;
      }
      case 'upload_file': {
        const bytes = req.params?.bytes;
        if (!(bytes instanceof Uint8Array) || typeof req.params.name !== 'string') {
          throw new RequestError({ code: 'bad_request', message: 'An upload needs a file name and its bytes.' });
        }
        const checked = await checkUpload(req.params.name, bytes);
        // Refused before anything is written when the browser says it will not fit.
        const refusal = noRoomMessage(`${checked.name} was not added`, bytes.byteLength, await storageEstimate());
        if (refusal) throw new RequestError({ code: 'storage', message: refusal });
        const taken = new Set((await files.list()).map((file) => file.path));
        const name = uniqueName(checked.name, (candidate) => taken.has(`documents/${candidate}`));
        let info: Awaited<ReturnType<typeof files.write>> | undefined;
        let record: DocumentRecord;
        try {
          info = await files.write(`documents/${name}`, bytes);
          record = await deps.memory.documents.addDocument({
            id: newId('doc'),
            filename: name,
            path: info.path,
            size: info.size,
            mime: checked.mime,
            description: describeUpload(name, checked.mime, info.size),
            status: 'uploaded',
          });
        } catch (error) {
          // Nothing half-added stays behind: a file without its record is removed again.
          if (info) await files.remove(info.path).catch(() => {});
          if (!isStorageFull(error)) throw error;
          throw new RequestError({ code: 'storage', message: storageFullMessage(`${name} was not added`, await storageUsage()) });
        }
        const document = toDocumentInfo(record);
        emit({ type: 'document_added', document });
        // Every PDF or image the user adds shows up as a document window.
        if (checked.mime === 'application/pdf' || checked.mime.startsWith('image/')) {
          await canvas.openWindow({ kind: 'document', title: name, path: info.path, mime: checked.mime });
        }
        pipeline.process(record);
        return document as ResultOf<M>;
      }
      case 'export_window': {
        const table = canvas.get(req.params.window_id);
        if (!table || table.kind !== 'table') throw new RequestError({ code: 'not_found', message: `No table window ${req.params.window_id}.` });
        const format = req.params.format;
        if (!(format in EXPORT_MIME)) throw new RequestError({ code: 'bad_request', message: 'The format must be csv, json or xlsx.' });
        return { filename: exportFileName(table.title, format), mime: EXPORT_MIME[format], bytes: await exportTable(table, format) } as ResultOf<M>;
      }
      case 'computer': {
        const action = req.params?.action;
        if (!['start', 'suspend', 'reboot', 'reset', 'save', 'download'].includes(action)) {
          throw new RequestError({ code: 'bad_request', message: 'The action must be start, suspend, reboot, reset, save or download.' });
        }
        if (!computer) return { state: 'unavailable', message: 'This stack has no computer.' } as ResultOf<M>;
        return (await computer.control(action)) as ResultOf<M>;
      }
      case 'computer_network': {
        if (!computer) return { sent_bytes: 0, received_bytes: 0, online: null } as ResultOf<M>;
        const use = await computer.networkUse();
        return { sent_bytes: use.sent, received_bytes: use.received, online: use.online } as ResultOf<M>;
      }
      case 'close': {
        if (missions.active > 0) throw new RequestError({ code: 'busy', message: 'The agent is working in this stack: wait for it to finish (or stop it), then try again.' });
        closed = true;
        clearInterval(heartbeatTimer);
        heartbeatTimer = undefined;
        await pipeline.idle();
        // A computer that ran this session is saved and stopped: its disk and state are then a pair.
        if (computer && !['off', 'unavailable', 'suspended'].includes(computer.status.state)) await computer.control('suspend');
        await checking;
        await log.flushed();
        if (req.params?.snapshot) {
          if (!deps.snapshotDatabases) throw new RequestError({ code: 'internal', message: 'This stack cannot copy its databases for an export.' });
          await deps.snapshotDatabases();
        }
        await deps.memory.close();
        return {} as ResultOf<M>;
      }
      case 'read_file': {
        const info = await files.stat(req.params.path);
        if (!info) throw new RequestError({ code: 'not_found', message: `There is no file at ${req.params.path}.` });
        return { ...info, bytes: await files.read(info.path) } as ResultOf<M>;
      }
      default:
        return assertNever(req, 'request');
    }
  }

  /** After `close`: the databases are closed and nothing more is served. */
  let closed = false;

  stopForStorage = (error) => {
    const shape: ErrorShape = isStorageFull(error)
      ? { code: 'storage', message: storageFullMessage('This request stopped because nothing more could be saved') }
      : { code: 'storage', message: `This request stopped because its progress could not be saved: ${toErrorShape(error).message}` };
    missions.abort(undefined, shape);
  };

  void checkModel();
  scheduleHeartbeat();

  return {
    async request<M extends Method>(request: StackRequest<M>): Promise<StackResponse<M>> {
      const requestId = typeof request?.id === 'string' ? request.id : '';
      if (!requestId || typeof request.method !== 'string') {
        return { request_id: requestId, ok: false, error: { code: 'bad_request', message: 'A request needs an id and a method.' } };
      }
      // An answer comes after the events its request emitted are stored and delivered: what a
      // caller was told happened is durable, and its events are already in the subscriber's view.
      if (closed) return { request_id: requestId, ok: false, error: { code: 'interrupted', message: 'This stack was closed in this tab (to be copied); open it again to go on.' } };
      const failuresBefore = log.storeFailures;
      try {
        const result = await handle(request);
        await log.flushed();
        if (log.storeFailures > failuresBefore) {
          // What the request did is not durable: the caller hears it failed, and why.
          return { request_id: requestId, ok: false, error: await unsavedError(log.lastStoreError, request.method, request.params) };
        }
        return { request_id: requestId, ok: true, result };
      } catch (error) {
        await log.flushed();
        return { request_id: requestId, ok: false, error: describeRequestError(error, request.method) };
      }
    },

    async subscribe(afterSeq: number, listener: EventListener) {
      const backlog = await log.since(afterSeq);
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
      const computerStatus = computer?.status ?? { state: 'unavailable' as const, message: 'This stack has no computer.' };
      return { windows: canvas.windows(), settings, model, computer: computerStatus, last_seq: log.lastSeq };
    },

    async subscribeTerminal(listener) {
      await computer?.subscribeTerminal(listener);
    },
    async terminalInput(bytes) {
      if (bytes instanceof Uint8Array) await computer?.terminalInput(bytes);
    },
    async terminalResize(cols, rows) {
      if (Number.isInteger(cols) && Number.isInteger(rows) && cols > 0 && rows > 0 && cols < 1000 && rows < 1000) await computer?.terminalResize(cols, rows);
    },
  };
}

/** UserFiles that report each write and removal (to keep /workspace in the computer in step). */
function notifyingFiles(files: UserFiles, changed: (path: string) => void): UserFiles {
  return {
    ...files,
    async write(path, data) {
      const info = await files.write(path, data);
      changed(info.path);
      return info;
    },
    async remove(path) {
      const removed = await files.remove(path);
      if (removed) changed(normaliseUserPath(path));
      return removed;
    },
  };
}

/** Collects streamed output per tool call and hands it on at most ~10 times a second. */
function createOutputCoalescer(send: (toolUseId: string, stream: 'stdout' | 'stderr', text: string) => void) {
  const pending = new Map<string, { stream: 'stdout' | 'stderr'; text: string }[]>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    for (const [toolUseId, parts] of pending) for (const part of parts) send(toolUseId, part.stream, part.text);
    pending.clear();
  };
  return {
    push(toolUseId: string, stream: 'stdout' | 'stderr', text: string) {
      if (!text) return;
      const parts = pending.get(toolUseId) ?? [];
      const last = parts.at(-1);
      if (last && last.stream === stream) last.text += text;
      else parts.push({ stream, text });
      pending.set(toolUseId, parts);
      timer ??= setTimeout(flush, 100);
    },
  };
}

async function findDocument(memory: StackMemory, nameOrId: string): Promise<DocumentRecord | undefined> {
  const wanted = nameOrId.trim().replace(/^\/?workspace\//, '');
  const byId = await memory.documents.getDocument(wanted);
  if (byId) return byId;
  const all = await memory.documents.listDocuments(1000);
  return all.find((doc) => doc.path === wanted || doc.filename === wanted || doc.path === `documents/${wanted}`);
}

/** The documents the agent should know of, newest first (a turn's context stays short). */
async function attachmentIndex(memory: StackMemory): Promise<string> {
  try {
    const documents = await memory.documents.listDocuments(50);
    return documents.map((doc) => `- ${doc.filename} (${doc.mime}, ${doc.status}) at ${doc.path}: ${doc.description}`).join('\n');
  } catch {
    return '';
  }
}

function toDocumentInfo(record: DocumentRecord): DocumentInfo {
  return {
    id: record.id,
    filename: record.filename,
    path: record.path,
    mime: record.mime,
    size: record.size,
    status: record.status,
    description: record.description,
    page_count: record.pageCount,
    error: record.error,
  };
}

/** A first one-line description, until the document pipeline reads the file. */
function describeUpload(name: string, mime: string, size: number): string {
  const kind = mime === 'application/pdf' ? 'PDF' : mime.startsWith('image/') ? 'image' : mime.includes('spreadsheet') ? 'spreadsheet' : mime === 'text/csv' ? 'CSV file' : 'text file';
  return `${kind} "${name}", ${size < 1024 ? `${size} bytes` : `${Math.round(size / 1024)} KB`}, uploaded by the user`;
}

/**
 * Missions that were queued or running when the page went away never finished: they are closed
 * now as interrupted, so the chat shows what they did and that they stopped.
 */
async function closeInterruptedMissions(log: EventLog, emit: (event: StackEventBody) => void) {
  const recent = await log.since(Math.max(0, log.lastSeq - 20_000), 20_000);
  const open = new Set<string>();
  for (const event of recent) {
    if (event.type === 'mission_queued') open.add(event.mission_id);
    if (event.type === 'mission_finished') open.delete(event.mission_id);
  }
  for (const missionId of open) {
    emit({
      type: 'mission_finished',
      mission_id: missionId,
      status: 'interrupted',
      usage: emptyUsage(),
      error: { code: 'interrupted', message: 'Interrupted: the page was closed or reloaded before this finished. What it did is above; ask again to continue.' },
    });
  }
}

/** What the user did, for "… was not saved". */
function requestAction(method: string, params: unknown): string {
  const name = (params as { name?: unknown } | undefined)?.name;
  switch (method) {
    case 'mission':
      return 'Your message was not saved';
    case 'upload_file':
      return `${typeof name === 'string' ? name : 'The file'} was not added`;
    case 'update_settings':
      return 'The settings were not saved';
    default:
      return `${method} was not saved`;
  }
}

async function unsavedError(error: unknown, method: string, params: unknown): Promise<ErrorShape> {
  const action = requestAction(method, params);
  if (isStorageFull(error)) return { code: 'storage', message: storageFullMessage(action, await storageUsage()) };
  return { code: 'storage', message: `${action}: ${toErrorShape(error).message}` };
}

function describeRequestError(error: unknown, method: string): ErrorShape {
  if (error instanceof RequestError) return error.shape;
  if (error instanceof UploadError) return { code: 'bad_request', message: error.message };
  if (error instanceof SettingsError || error instanceof CanvasError || error instanceof UserPathError || error instanceof PermissionError) {
    return { code: 'bad_request', message: error.message };
  }
  if (error instanceof ZodError) {
    return { code: 'bad_request', message: error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ') };
  }
  if (isStorageFull(error)) return { code: 'storage', message: storageFullMessage(`${method} could not be saved`) };
  if (error instanceof DbError) return { ...toDbErrorShape(error), code: 'storage' };
  const shape = toErrorShape(error);
  return { ...shape, message: `${method} failed: ${shape.message}` };
}
