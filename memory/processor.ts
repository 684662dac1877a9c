// The observation processor: a stateless batch step. It reads the unprocessed observations and
// the memory files as they are now, asks a cheap model what to remember, and writes learnings,
// actions and file rewrites. Observations are marked processed only when all of that succeeded.
import { messageOf } from './db-errors.ts';
import { MEMORY_FILES, type MemoryFileName } from './memory-files.ts';
import type { MemoryStore, NewLearning, NewPendingAction, PendingAction, RunFailure } from './memory-store.ts';
import { attribute, batchTexts, markedLines, type BatchTexts } from './provenance.ts';
import { observationSize, processorPrompt, processorSystemPrompt } from './processor-prompt.ts';
import { parseProcessorReply, type FileUpdate, type ParsedReply } from './processor-reply.ts';
import type { MemoryFiles } from './stack-files.ts';
import type { Observation, TranscriptStore } from './transcript-store.ts';

/** The cheap model the processor asks by default; configurable per stack. */
export const DEFAULT_PROCESSOR_MODEL = 'claude-haiku-5-5';

export interface CompletionRequest {
  model: string;
  system: string;
  prompt: string;
  maxTokens: number;
}

/**
 * One non-streaming model call returning the reply's text. The worker adapts its model client
 * (same endpoint and retries as the agent); may throw on any failure.
 */
export type CompleteFn = (request: CompletionRequest) => Promise<string>;

/** The memory files and open actions as one batch's prompt showed them. */
interface ShownMemory {
  files: { name: MemoryFileName; content: string | undefined }[];
  actions: PendingAction[];
}

export interface ProcessorDeps {
  transcript: TranscriptStore;
  memory: MemoryStore;
  files: MemoryFiles;
  complete: CompleteFn;
  model?: string;
  /** Observations per model call. */
  maxBatch?: number;
  /** Rough budget for the observations' text in one prompt (characters). */
  maxBatchChars?: number;
  maxTokens?: number;
  /** Files the model may rewrite; all six unless narrowed. */
  writableFiles?: readonly MemoryFileName[];
  now?: () => number;
}

export type BatchOutcome =
  | { status: 'empty' }
  /** Every observation in the batch had been learned already (a crash before marking): now marked. */
  | { status: 'repaired'; observations: number }
  | {
      status: 'processed';
      observations: number;
      learnings: number;
      actions: number;
      files: MemoryFileName[];
      /** Set when the work is saved but marking observations processed failed (repaired next run). */
      warning?: string;
    }
  | { status: 'failed'; failure: RunFailure; message: string; observations: number; attempt: number };

export interface FlushOutcome {
  status: 'done' | 'failed';
  batches: BatchOutcome[];
  /** Observations still unprocessed afterwards (-1 when transcript.db could not say). */
  remaining: number;
}

export interface ObservationProcessor {
  /** One model call over the oldest unprocessed observations. Never throws. */
  processBatch(): Promise<BatchOutcome>;
  /** Batches until nothing is left or one fails (the rest waits for the next trigger). Never throws. */
  flushAll(): Promise<FlushOutcome>;
}

export function createObservationProcessor(deps: ProcessorDeps): ObservationProcessor {
  const model = deps.model ?? DEFAULT_PROCESSOR_MODEL;
  const now = deps.now ?? Date.now;
  const writable = deps.writableFiles ?? MEMORY_FILES.map((file) => file.name);
  const maxBatch = deps.maxBatch ?? 40;
  const maxBatchChars = deps.maxBatchChars ?? 120_000;
  let running: Promise<BatchOutcome> | undefined;

  async function selectBatch(): Promise<Observation[]> {
    const candidates = await deps.transcript.unprocessed(maxBatch);
    const batch: Observation[] = [];
    let size = 0;
    for (const obs of candidates) {
      size += observationSize(obs);
      if (batch.length > 0 && size > maxBatchChars) break;
      batch.push(obs);
    }
    return batch;
  }

  /** The next batch, after marking observations an earlier run learned from but did not mark. */
  async function pickBatch(): Promise<Observation[] | BatchOutcome> {
    const batch = await selectBatch();
    if (batch.length === 0) return { status: 'empty' };
    const learned = await deps.memory.alreadyLearned(batch.map((obs) => obs.id));
    if (learned.size === 0) return batch;
    await deps.transcript.markProcessed([...learned]);
    const rest = batch.filter((obs) => !learned.has(obs.id));
    return rest.length ? rest : { status: 'repaired', observations: learned.size };
  }

  /** The memory the model is shown: files and actions read fresh (the processor keeps no state). */
  async function readMemory(): Promise<ShownMemory> {
    const files = await Promise.all(MEMORY_FILES.map(async (file) => ({ name: file.name, content: await deps.files.read(file.name) })));
    return { files, actions: await deps.memory.pendingActions(50) };
  }

  async function buildRequest(batch: Observation[], shown: ShownMemory): Promise<CompletionRequest> {
    const [last] = await deps.memory.recentRuns(1);
    const retried = last?.status === 'failed' && last.observationIds.includes(batch[0]!.id);
    return {
      model,
      system: processorSystemPrompt(writable),
      prompt: processorPrompt({ ...shown, observations: batch, previousFailure: retried ? (last.error ?? undefined) : undefined }),
      maxTokens: deps.maxTokens ?? 16_000,
    };
  }

  /** What memory already holds from read content, as the model saw it in the prompt. */
  function rememberedContent(shown: ShownMemory): { label: string; text: string }[] {
    const remembered = shown.actions.flatMap((action) => (action.source === 'content' ? [{ label: action.sourceLabel ?? 'read content', text: action.content }] : []));
    for (const file of shown.files) remembered.push(...markedLines(file.content ?? ''));
    return remembered;
  }

  async function apply(batch: Observation[], reply: Extract<ParsedReply, { ok: true }>, startedAt: number, shown: ShownMemory): Promise<BatchOutcome> {
    const ids = batch.map((obs) => obs.id);
    const inBatch = new Map(batch.map((obs) => [obs.id, obs]));
    // The whole batch is compared, not only the observation the model cited: a citation is the
    // model's word, and a document that steers the model can steer that too.
    const texts = batchTexts(batch, rememberedContent(shown));
    const sessionId = batch.at(-1)!.sessionId;
    const learnings: NewLearning[] = reply.learnings.map((learning) => {
      const cited = learning.observationId === null ? undefined : inBatch.get(learning.observationId);
      const provenance = attribute(learning.content, texts);
      return {
        // A rule, a preference or a habit is the user's; read content can only state a fact.
        type: provenance.source === 'content' && learning.type !== 'tool_install' ? 'fact' : learning.type,
        content: learning.content,
        sessionId: cited?.sessionId ?? sessionId,
        sourceObservationId: cited?.id ?? null,
        confidence: learning.confidence,
        source: provenance.source,
        sourceLabel: provenance.label,
      };
    });
    const actions: NewPendingAction[] = reply.actions.map((action) => {
      const provenance = attribute(action.content, texts);
      return { ...action, source: provenance.source, sourceLabel: provenance.label };
    });
    const updates: FileUpdate[] = [];
    for (const update of reply.fileUpdates) {
      if (!writable.includes(update.name)) continue;
      const guarded = guardFileUpdate(update, shown.files.find((file) => file.name === update.name)?.content ?? '', texts);
      if (guarded.update) updates.push(guarded.update);
      for (const held of guarded.held) {
        learnings.push({ type: 'fact', content: held.line, sessionId, sourceObservationId: null, confidence: null, source: 'content', sourceLabel: held.label });
      }
    }
    // Files first: if the database write then fails, the retried batch sees the new files and
    // rewrites them again, which is harmless; the reverse order could lose a rewrite.
    for (const update of updates) await deps.files.write(update.name, update.content);
    const written = await deps.memory.writeBatch({
      learnings,
      actions,
      doneActionIds: reply.doneActionIds,
      run: { startedAt, model, observationIds: ids, status: 'ok', filesUpdated: updates.map((u) => u.name) },
    });
    const outcome: BatchOutcome = {
      status: 'processed',
      observations: ids.length,
      learnings: written.learningsAdded,
      actions: written.actionsAdded,
      files: updates.map((u) => u.name),
    };
    try {
      await deps.transcript.markProcessed(ids);
    } catch (error) {
      outcome.warning = `learned, but marking observations processed failed (repaired on the next run): ${messageOf(error)}`;
    }
    return outcome;
  }

  async function run(): Promise<BatchOutcome> {
    const startedAt = now();
    let picked: Observation[] | BatchOutcome;
    try {
      picked = await pickBatch();
    } catch (error) {
      return { status: 'failed', failure: 'storage_error', message: messageOf(error), observations: 0, attempt: 0 };
    }
    if (!Array.isArray(picked)) return picked;
    const batch = picked;
    const fail = async (failure: RunFailure, message: string): Promise<BatchOutcome> => {
      const observationIds = batch.map((obs) => obs.id);
      let attempt = 0;
      try {
        await deps.memory.recordRun({ startedAt, model, observationIds, status: 'failed', failure, error: message });
        attempt = await deps.memory.consecutiveFailures();
      } catch (error) {
        message = `${message} (and the failure could not be recorded: ${messageOf(error)})`;
      }
      return { status: 'failed', failure, message, observations: batch.length, attempt };
    };

    let request: CompletionRequest;
    let shown: ShownMemory;
    try {
      shown = await readMemory();
      request = await buildRequest(batch, shown);
    } catch (error) {
      return fail('storage_error', `reading memory: ${messageOf(error)}`);
    }
    let reply: string;
    try {
      reply = await deps.complete(request);
    } catch (error) {
      return fail('model_error', messageOf(error));
    }
    const parsed = parseProcessorReply(typeof reply === 'string' ? reply : '');
    if (!parsed.ok) return fail('malformed_reply', parsed.error);
    try {
      return await apply(batch, parsed, startedAt, shown);
    } catch (error) {
      return fail('storage_error', messageOf(error));
    }
  }

  function processBatch(): Promise<BatchOutcome> {
    // One batch at a time: a trigger while one runs joins it instead of sending the same observations twice.
    running ??= run()
      .catch((error): BatchOutcome => ({ status: 'failed', failure: 'storage_error', message: messageOf(error), observations: 0, attempt: 0 }))
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  async function flushAll(): Promise<FlushOutcome> {
    const batches: BatchOutcome[] = [];
    if (running) await running;
    // Bounded so a processor that keeps "succeeding" without progress cannot spin forever.
    for (let i = 0; i < 1_000; i++) {
      const outcome = await processBatch();
      batches.push(outcome);
      if (outcome.status === 'empty' || outcome.status === 'failed') break;
    }
    const failed = batches.at(-1)?.status === 'failed';
    let remaining = -1;
    try {
      remaining = await deps.transcript.countUnprocessed();
    } catch {
      // Reported as -1: unknown.
    }
    return { status: failed ? 'failed' : 'done', batches, remaining };
  }

  return { processBatch, flushAll };
}

/** Files whose every line the agent takes as the user's rule or its own character. */
const RULE_FILES: readonly MemoryFileName[] = ['soul.md', 'os.md', 'user.md'];

/**
 * Checks the lines a rewrite adds. In soul.md, os.md and user.md a line worded from read content
 * is held out of the file (it comes back as a learning with its source); in the other files it
 * stays, marked with where it came from. A rewrite left with nothing new is dropped.
 */
export function guardFileUpdate(update: FileUpdate, previous: string, texts: BatchTexts): { update: FileUpdate | null; held: { line: string; label: string }[] } {
  const before = new Set(previous.split(/\r?\n/).map((line) => line.trim()));
  const held: { line: string; label: string }[] = [];
  const lines: string[] = [];
  for (const line of update.content.split('\n')) {
    const trimmed = line.trim();
    const provenance = trimmed === '' || before.has(trimmed) || /^#{1,6}\s|^<!--/.test(trimmed) ? null : attribute(trimmed, texts);
    if (provenance?.source !== 'content') lines.push(line);
    else if (RULE_FILES.includes(update.name)) held.push({ line: trimmed.replace(/^[-*+]\s+/, ''), label: provenance.label });
    else lines.push(`${line} (from ${provenance.label})`);
  }
  const content = lines.join('\n');
  const unchanged = content.trim() === previous.trim();
  return { update: unchanged || content.trim() === '' ? null : { name: update.name, content }, held };
}
