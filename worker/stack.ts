// One stack: its settings, canvas, memory, event log and missions, behind the StackApi protocol.
// Framework-free and DOM-free; the worker entry wires it to OPFS, fetch and comlink.
import { ZodError } from 'zod';
import { DbError, DEFAULT_PROCESSOR_MODEL, toDbErrorShape, type DocumentRecord, type StackMemory } from '../memory/index.ts';
import type { CompactionPolicy } from './agent/compaction.ts';
import { toErrorShape } from './agent/errors.ts';
import { emptyUsage } from './agent/pricing.ts';
import type { StreamFn } from './agent/types.ts';
import { startAgentMemory } from './agent-memory.ts';
import { loadCanvas } from './canvas.ts';
import { loadConversation } from './conversation.ts';
import { openEventLog, type EventLog, type EventStore } from './event-log.ts';
import type { OcrEngine } from './documents/ocr.ts';
import type { PdfOpener, PdfPageRenderer } from './documents/pdf-text.ts';
import { createPipeline, readWords } from './documents/pipeline.ts';
import { recordedDemoStream } from './demo/demo.ts';
import { loadHooks } from './hooks.ts';
import { loadMcpServers } from './mcp/servers.ts';
import { createMissions } from './missions.ts';
import { createSubagents } from './subagents.ts';
import { createHeartbeat, HEARTBEAT_FILE } from './heartbeat.ts';
import { canvasHandlers } from './handlers/canvas.ts';
import { computerHandlers } from './handlers/computer.ts';
import type { Handlers, StackContext } from './handlers/context.ts';
import { RequestError } from './request-error.ts';
import { documentHandlers, toDocumentInfo } from './handlers/documents.ts';
import { missionHandlers } from './handlers/missions.ts';
import { ruleHandlers } from './handlers/rules.ts';
import { settingsHandlers } from './handlers/settings.ts';
import { skillHandlers } from './handlers/skills.ts';
import { taskHandlers } from './handlers/tasks.ts';
import { checkpointHandlers } from './handlers/checkpoints.ts';
import { checkpointBefore, createCheckpoints } from './checkpoints/checkpoints.ts';
import type { DatabaseCopies } from './checkpoints/sources.ts';
import { createListCheckpointsTool, createProposeRestoreTool } from './tools/checkpoints.ts';
import { createSkills, parseSkill } from './skills.ts';
import { loadTrust } from './trust.ts';
import { trustHandlers } from './handlers/trust.ts';
import { createScheduler, scheduledPrompt } from './tasks.ts';
import { createScheduleTaskTool } from './tools/schedule-task.ts';
import { createLoadSkillTool } from './tools/load-skill.ts';
import { createSaveSkillTool } from './tools/save-skill.ts';
import { isStorageFull, storageFullMessage, storageUsage } from './storage-full.ts';
import { checkModel as checkModelConnection, type ModelConnection } from './model-health.ts';
import { loadPermissionGate } from './permissions/gate.ts';
import type { ComputerStatus } from '../protocol/computer.ts';
import type { ErrorShape } from '../protocol/errors.ts';
import type { EventListener, StackEventBody } from '../protocol/events.ts';
import type { MissionKind, MissionStatus } from '../protocol/missions.ts';
import type { ModelStatus, Settings } from '../protocol/settings.ts';
import { requestTraits, type Method, type ResultOf, type StackApi, type StackRequest, type StackResponse } from '../protocol/stack-api.ts';
import { loadApiKey, loadSettings } from './settings.ts';
import { createMemoryStorage, type StackStorage } from './storage.ts';
import { deviceCredentials, pairDevice, type DeviceCredentials } from './device.ts';
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
import { normaliseUserPath, type UserFiles } from './user-files.ts';

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
  /** Consistent copies of both databases in memory, for a checkpoint. */
  copyDatabases?: () => Promise<DatabaseCopies>;
  /** The stack's folder in OPFS; with copyDatabases, the stack keeps checkpoints there. */
  stackDir?: () => Promise<FileSystemDirectoryHandle>;
}

/** The computer's states in which its VM worker runs an emulator. */
const COMPUTER_RUNNING: ReadonlySet<ComputerStatus['state']> = new Set(['downloading', 'booting', 'waking', 'ready']);

/** How long a mission's first change waits for the checkpoint before it to hold the stack. */
const CHECKPOINT_WAIT_MS = 15_000;

/** A network ticket is renewed this long before it ends (the proxy's last 12 h). */
const TICKET_MARGIN_MS = 3_600_000;

export async function createStack(deps: StackDeps): Promise<StackApi> {
  const newId = deps.newId ?? ((prefix: string) => `${prefix}_${crypto.randomUUID().slice(0, 12)}`);
  // A batch that cannot be stored (the disk is full) stops the work that is producing it: an
  // answer the user reads now but that is gone after a reload would be a loss they were not told of.
  let stopForStorage: (error: unknown) => void = () => {};
  const log = await openEventLog({ store: deps.memory.transcript as EventStore, onStoreError: (error) => stopForStorage(error) });
  const emit = log.append;
  // A stack from elsewhere is held first: what it brought that runs or sends is out of use
  // before the settings, rules, hooks, MCP servers and tasks below are read.
  const trust = await loadTrust({
    storage: deps.storage,
    files: deps.memory.stackFiles,
    tasks: deps.memory.tasks,
    defaults: deps.defaults,
    describeSkill: async (text) => (await parseSkill(text, 'installed')).description,
  });
  let settings = await loadSettings(deps.storage, deps.defaults);
  const credentials = deps.credentials ?? deviceCredentials(createMemoryStorage());
  // The computer's network: through the proxy, for a paired device, with a ticket for the relay
  // and the resolver only (never the device token), unless the user turned it off for this stack.
  // Asked at each start of the computer and when Settings or pairing change (a running computer
  // takes it at once). Without one, says why (the guest's [network] lines repeat it).
  let ticket: { network: VmNetwork; expires: number } | null = null;
  let ticketRefresh: ReturnType<typeof setTimeout> | null = null;
  async function computerNetwork(): Promise<ComputerNetwork> {
    const given = await networkNow();
    // Unpaired, turned off or refused: the next network gets a ticket of its own.
    if (!given.network) {
      ticket = null;
      if (ticketRefresh) clearTimeout(ticketRefresh);
    }
    return given;
  }
  async function networkNow(): Promise<ComputerNetwork> {
    if (!settings.computer_network) return { network: null, offline: 'its network is turned off for this stack in Settings' };
    if (settings.provider !== 'proxy') return { network: null, offline: 'it reaches the internet only through a Stackdocs proxy; choose one in Settings' };
    const token = await deviceToken();
    if (!token) return { network: null, offline: 'this device is not paired with the proxy; pair it in Settings' };
    const endpoint = settings.endpoint.replace(/\/+$/, '');
    if (ticket && ticket.expires > Date.now() + TICKET_MARGIN_MS && ticket.network.dnsUrl === `${endpoint}/dns-query`) return { network: ticket.network };
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
    // A computer that runs for days (a kiosk) gets a fresh ticket an hour before this one ends:
    // its lookups carry the ticket, and the relay checks it at each new socket.
    if (ticketRefresh) clearTimeout(ticketRefresh);
    ticketRefresh = setTimeout(() => {
      ticketRefresh = null;
      void computer?.networkChanged().catch((error: unknown) => console.warn('the computer could not take its new network ticket', error));
    }, Math.max(60_000, ticket.expires - Date.now() - TICKET_MARGIN_MS + 1_000));
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
  const gate = await loadPermissionGate(deps.storage, emit, newId, () => settings.kiosk === true);
  const conversation = await loadConversation(deps.storage);
  await closeInterruptedMissions(log, emit);
  const stream = async () => deps.createStream(await connection());
  const memory = await startAgentMemory({
    memory: deps.memory,
    stream,
    // A local server has only the model the user named; Anthropic has the cheap one.
    processorModel: () => (settings.provider === 'openai' ? settings.model : DEFAULT_PROCESSOR_MODEL),
  });
  // While the computer runs (its emulator holds 300-400 MB of the tab), the OCR engine keeps no
  // idle workers (100-200 MB each): they end once the documents queued are read, or when the
  // computer starts, and the next scan starts one again (about 0.6 s, begun as it is attached).
  const computerRunning = (status: ComputerStatus | undefined) => status !== undefined && COMPUTER_RUNNING.has(status.state);
  let wasRunning = false;
  const computer = deps.createComputer?.((status) => {
    emit({ type: 'computer_status', status });
    if (computerRunning(status) && !wasRunning) deps.ocr.release?.();
    wasRunning = computerRunning(status);
  }, computerNetwork);
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
    ocrLanguage: () => settings.ocr_language ?? 'auto',
    // A workbook's sheets open as tables.
    openTable: async (title, columns, rows) => void (await canvas.openWindow({ kind: 'table', title, columns, rows })),
    onIdle: () => {
      if (computerRunning(computer?.status)) deps.ocr.release?.();
    },
  });
  const fileType = async (path: string) => (await files.stat(path))?.mime ?? null;
  const skills = createSkills(deps.memory.stackFiles, (name) => trust.holdsSkill(name));
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
    createLoadSkillTool(skills),
    createSaveSkillTool(skills),
    createReadOcrTool({ findDocument: (nameOrId) => findDocument(deps.memory, nameOrId), files: files }),
    createSaveExtractionTool({
      findDocument: (nameOrId) => findDocument(deps.memory, nameOrId),
      documents: deps.memory.documents,
      get: canvas.get,
      windows: canvas.windows,
      openWindow: canvas.openWindow,
      patchWindow: canvas.patchWindow,
      words: (documentId) => readWords(files, documentId),
    }),
    createWebFetchTool({ fetchPage: createProxyFetchPage(() => (settings.provider === 'proxy' ? settings.endpoint : null), proxyFetch) }),
    createWebSearchTool({ search: createProxySearch({ endpoint: () => (settings.provider === 'proxy' ? settings.endpoint : null), fetch: proxyFetch }) }),
    createAddPermissionRuleTool(gate),
    createScheduleTaskTool({ create: (input) => tasks.create(input) }),
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
  // The user's MCP servers: stdio ones run in the computer, remote ones are reached through the proxy.
  const mcp = await loadMcpServers({
    storage: deps.storage,
    emit,
    computer: computer ? { service: (request, options) => computer.service(request, options) } : null,
    remote: (url, own) => {
      if (settings.provider !== 'proxy') return { refused: 'remote MCP servers are reached through the proxy, and this stack talks to the model directly (Settings)' };
      const endpoint = settings.endpoint.replace(/\/+$/, '');
      // The proxy forwards to the server's address (given in a header) when its owner allows that
      // host; the server's own headers ride inside one of ours, as `authorization` is the device's.
      return {
        url: new URL(`${endpoint}/v1/mcp`),
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          headers.set('x-mcp-url', url);
          if (Object.keys(own).length) headers.set('x-mcp-headers', JSON.stringify(own));
          return proxyFetch(input, { ...init, headers });
        },
      };
    },
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
    model: () => settings.model,
    ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
  });
  // Checkpoints: the whole stack before each mission's first change, and on demand.
  const checkpoints =
    deps.stackDir && deps.copyDatabases
      ? createCheckpoints({ stackDir: deps.stackDir, copyDatabases: deps.copyDatabases, computer, emit })
      : null;
  if (checkpoints) {
    tools.push(
      createListCheckpointsTool(() => checkpoints.list()),
      createProposeRestoreTool(async (checkpointId, reason) => {
        const known = (await checkpoints.list()).checkpoints.some((checkpoint) => checkpoint.id === checkpointId);
        if (!known) throw new Error(`there is no checkpoint ${checkpointId}; list_checkpoints names them`);
        const proposed = { checkpoint_id: checkpointId, reason };
        const open = canvas.windows().find((win) => win.kind === 'timeline');
        if (open) await canvas.patchWindow(open.id, { op: 'set', proposed });
        else await canvas.openWindow({ kind: 'timeline', title: 'Timeline', proposed });
      }),
    );
  }
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
    budget: () => settings.mission_token_budget ?? 0,
    canvas,
    gate,
    hooks,
    memory,
    conversation,
    stream,
    model: () => settings.model,
    attachments: () => attachmentIndex(deps.memory),
    skills: () => skills.promptList(),
    onModelTrouble: () => void checkModel(),
    heldHosts: () => trust.heldHosts(),
    // The demo reads the samples once the pipeline has read them (an OCR may still be running).
    demo: { stream: deps.demoStream ?? (() => recordedDemoStream()), ready: () => pipeline.idle() },
    ...(deps.maxRetries !== undefined ? { maxRetries: deps.maxRetries } : {}),
    ...(deps.compaction ? { compaction: deps.compaction } : {}),
  });

  // The heartbeat wakes the agent on its own every few minutes, when the user turned it on.
  const heartbeat = createHeartbeat({
    settings: () => settings,
    checklist: () => deps.memory.stackFiles.readText(HEARTBEAT_FILE),
    busy: () => missions.active > 0,
    // Offline with no local model, a beat could only fail: ask again only when the last check said no.
    modelReady: async () => model.state === 'ready' || (await checkModel()).state === 'ready',
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
      // A new endpoint, a pairing or its end: the running computer's network follows.
      void computer?.networkChanged().catch((error: unknown) => console.warn('the computer could not take its new network', error));
      return model;
    });
    checking = next.catch(() => {});
    return next;
  }

  const context: StackContext = {
    deps,
    emit,
    newId,
    get settings() {
      return settings;
    },
    set settings(next) {
      settings = next;
    },
    missions,
    canvas,
    gate,
    hooks,
    mcp,
    memory,
    computer,
    files,
    pipeline,
    credentials,
    checkModel,
    heartbeat,
    tasks,
    subagents,
  };
  // One handler per method, each capability's in its own module (handlers/); missing one is a type error.
  const settingsRequests = settingsHandlers(context);
  const handlers: Handlers<Method> = {
    ...missionHandlers(context),
    ...settingsRequests,
    ...trustHandlers(context, trust, (patch) => settingsRequests.update_settings(patch, newId('trust'))),
    ...canvasHandlers(context),
    ...ruleHandlers(context),
    ...documentHandlers(context),
    ...computerHandlers(context),
    // A skill the owner installs under the name of one a stack from elsewhere brought is theirs.
    ...skillHandlers({
      ...skills,
      async install(files, dryRun) {
        const skill = await skills.install(files, dryRun);
        if (!dryRun) await trust.release(`skill:${skill.name}`);
        return skill;
      },
    }),
    ...taskHandlers(tasks),
    ...checkpointHandlers(checkpoints),
    // Makes the stack's files still for a copy: the last thing this worker does.
    async close(params) {
      if (missions.active > 0) throw new RequestError({ code: 'busy', message: 'The agent is working in this stack: wait for it to finish (or stop it), then try again.' });
      closed = true;
      heartbeat.stop();
      tasks.stop();
      await mcp.close();
      if (ticketRefresh) clearTimeout(ticketRefresh);
      await pipeline.idle();
      await checkpoints?.idle();
      // A computer that ran this session is saved and stopped: its disk and state are then a pair.
      if (computer && !['off', 'unavailable', 'suspended'].includes(computer.status.state)) await computer.control('suspend');
      await checking;
      await log.flushed();
      if (params?.snapshot) {
        if (!deps.snapshotDatabases) throw new RequestError({ code: 'internal', message: 'This stack cannot copy its databases for an export.' });
        await deps.snapshotDatabases();
      }
      await deps.memory.close();
      return {};
    },
  };

  function handle<M extends Method>(request: StackRequest<M>): Promise<ResultOf<M>> {
    const handler = Object.hasOwn(handlers, request.method) ? (handlers[request.method] as Handlers<M>[M]) : undefined;
    if (!handler) throw new RequestError({ code: 'bad_request', message: `There is no request "${String(request.method)}".` });
    return handler(request.params, request.id);
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
  heartbeat.schedule();
  await tasks.start();

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
        return { request_id: requestId, ok: false, error: describeRequestError(error, request.method, request.params) };
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
      return { windows: canvas.windows(), settings, trust: trust.state(), model, computer: computerStatus, last_seq: log.lastSeq };
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

async function unsavedError(error: unknown, method: string, params: unknown): Promise<ErrorShape> {
  const notDone = requestTraits(method).notDone(params as never);
  if (isStorageFull(error)) return { code: 'storage', message: storageFullMessage(notDone, await storageUsage()) };
  return { code: 'storage', message: `${notDone}: ${toErrorShape(error).message}` };
}

function describeRequestError(error: unknown, method: string, params: unknown): ErrorShape {
  // A refusal (each capability's own extends RequestError) reads as it is.
  if (error instanceof RequestError) return error.shape;
  if (error instanceof ZodError) {
    return { code: 'bad_request', message: error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ') };
  }
  const notDone = requestTraits(method).notDone(params as never);
  if (isStorageFull(error)) return { code: 'storage', message: storageFullMessage(notDone) };
  if (error instanceof DbError) return { ...toDbErrorShape(error), code: 'storage' };
  const shape = toErrorShape(error);
  return { ...shape, message: `${notDone}: ${shape.message}` };
}
