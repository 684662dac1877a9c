// The observation processor: a stateless batch step. It reads the unprocessed observations and
// the memory files as they are now, asks a cheap model what to remember, and writes learnings,
// actions and file rewrites. Observations are marked processed only when all of that succeeded.
// The batch is picked in processor-batch.ts, the prompt made in processor-prompt.ts, the reply
// read in processor-reply.ts and written in processor-apply.ts.
import { messageOf } from './db-errors.ts';
import { MEMORY_FILES, type MemoryFileName } from './memory-files.ts';
import type { MemoryStore, RunFailure } from './memory-store.ts';
import { applyReply, type ProcessedBatch, type ReplyTarget, type ShownMemory } from './processor-apply.ts';
import { pickBatch, type BatchSource, type NoBatch } from './processor-batch.ts';
import { processorPrompt, processorSystemPrompt } from './processor-prompt.ts';
import { parseProcessorReply } from './processor-reply.ts';
import type { MemoryFiles } from './stack-files.ts';
import type { Observation, TranscriptStore } from './transcript-store.ts';

export { guardFileUpdate } from './processor-apply.ts';

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
  | NoBatch
  | ProcessedBatch
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
  const source: BatchSource = { transcript: deps.transcript, memory: deps.memory, maxBatch, maxBatchChars };
  const target: ReplyTarget = { transcript: deps.transcript, memory: deps.memory, files: deps.files, model, writable };

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

  async function run(): Promise<BatchOutcome> {
    const startedAt = now();
    let picked: Observation[] | BatchOutcome;
    try {
      picked = await pickBatch(source);
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
      return await applyReply(target, batch, parsed, startedAt, shown);
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
