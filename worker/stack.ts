// One stack: its settings, canvas, memory, event log and missions, behind the StackApi protocol.
// Framework-free and DOM-free; the worker entry wires it to OPFS, fetch and comlink.
import { DEFAULT_PROCESSOR_MODEL } from '../memory/index.ts';
import type { ComputerStatus } from '../protocol/computer.ts';
import type { EventListener, StackEventBody } from '../protocol/events.ts';
import type { StackApi } from '../protocol/stack-api.ts';
import { startAgentMemory } from './agent-memory.ts';
import { loadCanvas } from './canvas.ts';
import { createCheckpoints, type Checkpoints } from './checkpoints/checkpoints.ts';
import type { Computer, ComputerNetwork } from './computer.ts';
import { loadConversation } from './conversation.ts';
import { deviceCredentials } from './device.ts';
import { createPipeline } from './documents/pipeline.ts';
import { openEventLog, type EventLog, type EventStore } from './event-log.ts';
import type { StackContext } from './handlers/context.ts';
import { toDocumentInfo } from './handlers/documents.ts';
import { stackHandlers } from './handlers/index.ts';
import { closeInterruptedMissions } from './interrupted-missions.ts';
import { createModelSession, type ModelSession } from './model-session.ts';
import { loadPermissionGate } from './permissions/gate.ts';
import { RequestError } from './request-error.ts';
import { loadSettings } from './settings.ts';
import { createSkills, parseSkill } from './skills.ts';
import type { StackDeps } from './stack-deps.ts';
import { mountAgent } from './stack-agent.ts';
import { serveRequests, stoppedForStorage } from './stack-requests.ts';
import { createStackTools } from './stack-tools.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { createOutputCoalescer } from './tools/output-coalescer.ts';
import { loadTrust } from './trust.ts';
import { notifyingFiles } from './user-files.ts';

/** The computer's states in which its VM worker runs an emulator. */
const COMPUTER_RUNNING: ReadonlySet<ComputerStatus['state']> = new Set(['downloading', 'booting', 'waking', 'ready']);
const computerRunning = (status: ComputerStatus | undefined) => status !== undefined && COMPUTER_RUNNING.has(status.state);

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
  const session = createModelSession({ deps, credentials, settings: () => settings, computer: () => computer, emit });
  const canvas = await loadCanvas(deps.storage, emit, () => newId('w'));
  const gate = await loadPermissionGate(deps.storage, emit, newId, () => settings.kiosk === true);
  const conversation = await loadConversation(deps.storage);
  await closeInterruptedMissions(log, emit);
  const stream = async () => deps.createStream(await session.connection());
  const memory = await startAgentMemory({
    memory: deps.memory,
    stream,
    // A local server has only the model the user named; Anthropic has the cheap one.
    processorModel: () => (settings.provider === 'openai' ? settings.model : DEFAULT_PROCESSOR_MODEL),
  });
  const computer = startComputer(deps, emit, session.computerNetwork);
  // Every file the stack worker writes or removes also reaches /workspace in the computer.
  const files = computer ? notifyingFiles(deps.files, (path) => computer.workspaceChanged(path)) : deps.files;
  const pipeline = createPipeline({
    files,
    documents: deps.memory.documents,
    emit,
    openPdf: deps.openPdf,
    ocr: deps.ocr,
    toInfo: toDocumentInfo,
    ...(deps.renderPdfPages ? { renderPdfPages: deps.renderPdfPages } : {}),
    // Scans go to Mistral OCR through the proxy when the user chose it in the settings.
    mistralOcr: { settings: () => settings, fetch: session.proxyFetch },
    ocrLanguage: () => settings.ocr_language ?? 'auto',
    // A workbook's sheets open as tables.
    openTable: async (title, columns, rows) => void (await canvas.openWindow({ kind: 'table', title, columns, rows })),
    onIdle: () => {
      if (computerRunning(computer?.status)) deps.ocr.release?.();
    },
  });
  const skills = createSkills(deps.memory.stackFiles, (name) => trust.holdsSkill(name));
  // Checkpoints: the whole stack before each mission's first change, and on demand.
  const checkpoints = deps.stackDir && deps.copyDatabases ? createCheckpoints({ stackDir: deps.stackDir, copyDatabases: deps.copyDatabases, computer, emit }) : null;
  const toolOutput = createOutputCoalescer((tool_use_id, stream, text) => emit({ type: 'tool_output', mission_id: missions.current ?? '', tool_use_id, stream, text }));
  const tools = createStackTools({
    canvas, files, computer, output: toolOutput.push, databases: deps.memory, memory, skills, gate, emit, checkpoints,
    settings: () => settings,
    proxyFetch: session.proxyFetch,
    tasks: () => tasks,
    mission: () => missions.current,
  });
  const { hooks, mcp, subagents, missions, heartbeat, tasks } = await mountAgent({
    deps, emit, newId, settings: () => settings, session, trust, canvas, gate, conversation, memory, computer, tools, skills, checkpoints, pipeline, stream,
  });

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
    checkModel: session.checkModel,
    heartbeat,
    tasks,
    subagents,
  };
  /** After `close`: the databases are closed and nothing more is served. */
  let closed = false;
  const handlers = stackHandlers(context, { trust, skills, checkpoints }, async (params) => {
    if (missions.active > 0) throw new RequestError({ code: 'busy', message: 'The agent is working in this stack: wait for it to finish (or stop it), then try again.' });
    closed = true;
    await closeStack({ ...context, session, checkpoints, log }, params?.snapshot === true);
    return {};
  });

  stopForStorage = (error) => missions.abort(undefined, stoppedForStorage(error));

  void session.checkModel();
  heartbeat.schedule();
  await tasks.start();

  return {
    request: serveRequests(handlers, log, () => closed),

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
      return { windows: canvas.windows(), settings, trust: trust.state(), model: session.model, computer: computerStatus, last_seq: log.lastSeq };
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

/**
 * The stack's computer, if it has one. While it runs (its emulator holds 300-400 MB of the tab),
 * the OCR engine keeps no idle workers (100-200 MB each): they end once the documents queued are
 * read, or when the computer starts, and the next scan starts one again (about 0.6 s, begun as it
 * is attached).
 */
function startComputer(deps: StackDeps, emit: (event: StackEventBody) => void, network: () => Promise<ComputerNetwork>): Computer | undefined {
  let wasRunning = false;
  return deps.createComputer?.((status) => {
    emit({ type: 'computer_status', status });
    if (computerRunning(status) && !wasRunning) deps.ocr.release?.();
    wasRunning = computerRunning(status);
  }, network);
}

/**
 * Makes the stack's files still for a copy, the last thing its worker does: timers and servers
 * stopped, documents read, a checkpoint under way done, the computer saved and stopped (its disk
 * and state then a pair), the log stored, the databases copied for an export and closed.
 */
async function closeStack(parts: StackContext & { session: ModelSession; checkpoints: Checkpoints | null; log: EventLog }, snapshot: boolean): Promise<void> {
  const { deps, computer } = parts;
  parts.heartbeat.stop();
  parts.tasks.stop();
  await parts.mcp.close();
  await parts.pipeline.idle();
  await parts.checkpoints?.idle();
  if (computer && !['off', 'unavailable', 'suspended'].includes(computer.status.state)) await computer.control('suspend');
  await parts.session.close();
  await parts.log.flushed();
  if (snapshot) {
    if (!deps.snapshotDatabases) throw new RequestError({ code: 'internal', message: 'This stack cannot copy its databases for an export.' });
    await deps.snapshotDatabases();
  }
  await deps.memory.close();
}
