// The memory hooks the agent runtime calls during a session. They turn each turn into one
// observation, count turns, start a batch every `batchEvery` turns, flush before compaction and
// at session end. They never throw: failures come back as results and go to `onError`.
import { DbError, messageOf } from './db-errors.ts';
import type { BatchOutcome, FlushOutcome, ObservationProcessor } from './processor.ts';
import type { TranscriptStore } from './transcript-store.ts';
import { TurnBuffer, type ToolCallInput } from './turn-buffer.ts';

export const DEFAULT_BATCH_EVERY = 25;

export interface HookError {
  hook: string;
  code: string;
  message: string;
}

export type HookResult = { ok: true } | { ok: false; error: HookError };

export type StopResult = HookResult & {
  /** Id of the observation written; absent when the turn was empty or the write failed. */
  observationId?: number;
  /** Set when this turn reached the threshold and a batch started (it runs in the background). */
  batch?: Promise<BatchOutcome>;
};

export type FlushResult = HookResult & { flush?: FlushOutcome };

export interface MemoryHooksDeps {
  transcript: Pick<TranscriptStore, 'appendObservation' | 'endSession'>;
  processor: ObservationProcessor;
  sessionId: string;
  buffer?: TurnBuffer;
  batchEvery?: number;
  /**
   * Turns already waiting from earlier sessions (`transcript.countUnprocessed()`), so a reload
   * does not postpone the next batch by another `batchEvery` turns.
   */
  initialTurnCount?: number;
  /** Told about every failure; must not throw (if it does, that is swallowed). */
  onError?: (error: HookError) => void;
}

export interface MemoryHooks {
  /** A turn starts with the user's message. A previous turn left unfinished is written first. */
  userPromptSubmit(text: string): Promise<HookResult>;
  /** Buffers a summary of a finished tool call; writes nothing. */
  postToolUse(call: ToolCallInput): HookResult;
  /** Adds streamed answer text to the turn. */
  agentText(text: string): HookResult;
  /** Replaces the turn's answer text. */
  setAgentResponse(text: string): HookResult;
  /** The turn ended: writes one observation, counts the turn, starts a batch at the threshold. */
  stop(): Promise<StopResult>;
  /** Before compacting the conversation: 'auto' flushes every unprocessed observation first. */
  preCompact(trigger: 'auto' | 'manual'): Promise<FlushResult>;
  /** Writes an unfinished turn, flushes everything, and closes the session record. */
  sessionEnd(): Promise<FlushResult>;
  /** Turns since the last batch started. */
  readonly turnCount: number;
  /** Resolves when batches started by stop() have finished. */
  idle(): Promise<void>;
}

export function createMemoryHooks(deps: MemoryHooksDeps): MemoryHooks {
  const buffer = deps.buffer ?? new TurnBuffer();
  const batchEvery = deps.batchEvery ?? DEFAULT_BATCH_EVERY;
  let turnCount = deps.initialTurnCount ?? 0;
  const background = new Set<Promise<unknown>>();

  const failure = (hook: string, error: unknown): { ok: false; error: HookError } => {
    const code = error instanceof DbError ? error.code : 'internal';
    const hookError: HookError = { hook, code, message: messageOf(error) };
    try {
      deps.onError?.(hookError);
    } catch {
      // A broken listener must not turn a recorded failure into a thrown one.
    }
    return { ok: false, error: hookError };
  };

  async function writeTurn(): Promise<number | undefined> {
    const turn = buffer.take();
    if (!turn) return undefined;
    const observation = await deps.transcript.appendObservation({ sessionId: deps.sessionId, ...turn });
    return observation.id;
  }

  function startBatch(): Promise<BatchOutcome> {
    turnCount = 0;
    const batch = deps.processor.processBatch().catch((error): BatchOutcome => {
      failure('batch', error);
      return { status: 'failed', failure: 'storage_error', message: messageOf(error), observations: 0, attempt: 0 };
    });
    const tracked = batch.then((outcome) => {
      if (outcome.status === 'failed') failure('batch', new Error(`${outcome.failure}: ${outcome.message}`));
    });
    background.add(tracked);
    void tracked.finally(() => background.delete(tracked));
    return batch;
  }

  async function flush(hook: string): Promise<FlushResult> {
    const flushed = await deps.processor.flushAll();
    if (flushed.status === 'failed') {
      const last = flushed.batches.at(-1);
      const message = last?.status === 'failed' ? `${last.failure}: ${last.message}` : 'flush failed';
      return { ...failure(hook, new Error(message)), flush: flushed };
    }
    return { ok: true, flush: flushed };
  }

  return {
    async userPromptSubmit(text) {
      try {
        if (!buffer.isEmpty) await writeTurn();
      } catch (error) {
        buffer.clear();
        buffer.setUserMessage(text);
        return failure('userPromptSubmit', error);
      }
      buffer.setUserMessage(text);
      return { ok: true };
    },

    postToolUse(call) {
      try {
        buffer.addToolCall(call);
        return { ok: true };
      } catch (error) {
        return failure('postToolUse', error);
      }
    },

    agentText(text) {
      try {
        buffer.appendAgentText(text);
        return { ok: true };
      } catch (error) {
        return failure('agentText', error);
      }
    },

    setAgentResponse(text) {
      try {
        buffer.setAgentResponse(text);
        return { ok: true };
      } catch (error) {
        return failure('setAgentResponse', error);
      }
    },

    async stop() {
      let observationId: number | undefined;
      try {
        observationId = await writeTurn();
      } catch (error) {
        return failure('stop', error);
      }
      if (observationId === undefined) return { ok: true };
      turnCount++;
      if (turnCount >= batchEvery) return { ok: true, observationId, batch: startBatch() };
      return { ok: true, observationId };
    },

    async preCompact(trigger) {
      if (trigger !== 'auto') return { ok: true };
      try {
        turnCount = 0;
        return await flush('preCompact');
      } catch (error) {
        return failure('preCompact', error);
      }
    },

    async sessionEnd() {
      let unwritten: FlushResult | undefined;
      try {
        await writeTurn();
      } catch (error) {
        unwritten = failure('sessionEnd', error);
      }
      turnCount = 0;
      let result: FlushResult;
      try {
        result = await flush('sessionEnd');
      } catch (error) {
        result = failure('sessionEnd', error);
      }
      try {
        await deps.transcript.endSession(deps.sessionId);
      } catch (error) {
        return { ...failure('sessionEnd', error), ...(result.flush ? { flush: result.flush } : {}) };
      }
      return unwritten && result.ok ? { ...unwritten, ...(result.flush ? { flush: result.flush } : {}) } : result;
    },

    get turnCount() {
      return turnCount;
    },

    async idle() {
      while (background.size) await Promise.all([...background]);
    },
  };
}
