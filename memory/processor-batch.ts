// The processor's next batch: the oldest unprocessed observations within a size budget, after
// marking those an earlier run learned from but did not mark (a crash between its two writes).
import { observationSize } from './processor-prompt.ts';
import type { MemoryStore } from './memory-store.ts';
import type { Observation, TranscriptStore } from './transcript-store.ts';

/** Why there is no batch to send: nothing is unprocessed, or all of it had been learned already (now marked). */
export type NoBatch =
  | { status: 'empty' }
  /** Every observation in the batch had been learned already (a crash before marking): now marked. */
  | { status: 'repaired'; observations: number };

export interface BatchSource {
  transcript: TranscriptStore;
  memory: MemoryStore;
  /** Observations per model call. */
  maxBatch: number;
  /** Rough budget for the observations' text in one prompt (characters). */
  maxBatchChars: number;
}

async function selectBatch(source: BatchSource): Promise<Observation[]> {
  const candidates = await source.transcript.unprocessed(source.maxBatch);
  const batch: Observation[] = [];
  let size = 0;
  for (const obs of candidates) {
    size += observationSize(obs);
    if (batch.length > 0 && size > source.maxBatchChars) break;
    batch.push(obs);
  }
  return batch;
}

/** The next batch, after marking observations an earlier run learned from but did not mark. */
export async function pickBatch(source: BatchSource): Promise<Observation[] | NoBatch> {
  const batch = await selectBatch(source);
  if (batch.length === 0) return { status: 'empty' };
  const learned = await source.memory.alreadyLearned(batch.map((obs) => obs.id));
  if (learned.size === 0) return batch;
  await source.transcript.markProcessed([...learned]);
  const rest = batch.filter((obs) => !learned.has(obs.id));
  return rest.length ? rest : { status: 'repaired', observations: learned.size };
}
