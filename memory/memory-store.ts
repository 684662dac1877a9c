// memory.db access for learnings, pending actions and the processor's run log. The agent only
// ever reads (the loader, search_memory); the processor is the one writer.
import type { Database, Queryable } from './database.ts';
import type { ActionPriority, ActionStatus, LearningSource, LearningType } from './memory-schema.ts';

export interface NewLearning {
  type: LearningType;
  content: string;
  sessionId?: string | null;
  sourceObservationId?: number | null;
  /** 0..1; null when the source gave none. */
  confidence?: number | null;
  createdAt?: number;
  /** Whose words these are (see LEARNING_SOURCES); null when unknown. */
  source?: LearningSource | null;
  /** Where content came from, e.g. "read documents/offer.pdf". */
  sourceLabel?: string | null;
}

export interface Learning {
  id: number;
  createdAt: number;
  sessionId: string | null;
  type: LearningType;
  content: string;
  sourceObservationId: number | null;
  confidence: number | null;
  source: LearningSource | null;
  sourceLabel: string | null;
}

export interface NewPendingAction {
  content: string;
  priority?: ActionPriority;
  sourceLearningId?: number | null;
  source?: LearningSource | null;
  sourceLabel?: string | null;
}

export interface PendingAction {
  id: number;
  createdAt: number;
  content: string;
  priority: ActionPriority;
  status: ActionStatus;
  sourceLearningId: number | null;
  resolvedAt: number | null;
  source: LearningSource | null;
  sourceLabel: string | null;
}

export type RunFailure = 'model_error' | 'malformed_reply' | 'storage_error';

export interface ProcessorRunRecord {
  startedAt: number;
  model: string;
  observationIds: readonly number[];
  status: 'ok' | 'failed';
  failure?: RunFailure;
  error?: string;
  learningsAdded?: number;
  actionsAdded?: number;
  filesUpdated?: readonly string[];
}

export interface ProcessorRun extends Required<Omit<ProcessorRunRecord, 'failure' | 'error'>> {
  id: number;
  finishedAt: number;
  failure: RunFailure | null;
  error: string | null;
}

/** What one successful batch writes to memory.db, all in one transaction. */
export interface BatchWrite {
  learnings: readonly NewLearning[];
  actions: readonly NewPendingAction[];
  /** Pending actions the batch saw done. */
  doneActionIds: readonly number[];
  run: ProcessorRunRecord;
}

const LEARNING_COLUMNS = `id, created_at AS createdAt, session_id AS sessionId, type, content,
  source_observation_id AS sourceObservationId, confidence, source, source_label AS sourceLabel`;
const ACTION_COLUMNS = `id, created_at AS createdAt, content, priority, status,
  source_learning_id AS sourceLearningId, resolved_at AS resolvedAt, source, source_label AS sourceLabel`;

export class MemoryStore {
  constructor(
    readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Inserts learnings in one transaction; one already stored (same type and content) is skipped. */
  async addLearnings(learnings: readonly NewLearning[]): Promise<number> {
    return this.db.transaction(async (tx) => {
      let added = 0;
      for (const learning of learnings) added += await this.#insertLearning(tx, learning);
      return added;
    });
  }

  async recentLearnings(limit = 10): Promise<Learning[]> {
    return this.db.all<Learning>(`SELECT ${LEARNING_COLUMNS} FROM learnings ORDER BY created_at DESC, id DESC LIMIT ?`, [limit]);
  }

  async countLearnings(): Promise<number> {
    return (await this.db.get<{ n: number }>('SELECT count(*) AS n FROM learnings'))!.n;
  }

  async addPendingAction(action: NewPendingAction): Promise<number> {
    return this.#insertAction(this.db, action);
  }

  /** Open actions, most urgent first, oldest first within a priority. */
  async pendingActions(limit = 50): Promise<PendingAction[]> {
    return this.db.all<PendingAction>(
      `SELECT ${ACTION_COLUMNS} FROM pending_actions WHERE status = 'pending'
       ORDER BY CASE priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, created_at, id LIMIT ?`,
      [limit],
    );
  }

  /** Closes an open action; returns false when it was not open. */
  async resolveAction(id: number, status: Exclude<ActionStatus, 'pending'>): Promise<boolean> {
    const { changes } = await this.db.run(
      "UPDATE pending_actions SET status = ?, resolved_at = ? WHERE id = ? AND status = 'pending'",
      [status, this.now(), id],
    );
    return changes > 0;
  }

  /** Writes a successful batch: learnings, actions, closed actions and the run record together. */
  async writeBatch(batch: BatchWrite): Promise<{ learningsAdded: number; actionsAdded: number }> {
    return this.db.transaction(async (tx) => {
      let learningsAdded = 0;
      for (const learning of batch.learnings) learningsAdded += await this.#insertLearning(tx, learning);
      for (const action of batch.actions) await this.#insertAction(tx, action);
      for (const id of batch.doneActionIds) {
        await tx.run("UPDATE pending_actions SET status = 'done', resolved_at = ? WHERE id = ? AND status = 'pending'", [this.now(), id]);
      }
      const counts = { learningsAdded, actionsAdded: batch.actions.length };
      await this.#insertRun(tx, { ...batch.run, ...counts });
      return counts;
    });
  }

  async recordRun(run: ProcessorRunRecord): Promise<void> {
    await this.#insertRun(this.db, run);
  }

  async recentRuns(limit = 10): Promise<ProcessorRun[]> {
    const rows = await this.db.all<Record<string, unknown>>('SELECT * FROM processor_runs ORDER BY id DESC LIMIT ?', [limit]);
    return rows.map(toRun);
  }

  /** Failed runs since the last successful one: how often the current backlog has been tried. */
  async consecutiveFailures(): Promise<number> {
    const row = await this.db.get<{ n: number }>(
      `SELECT count(*) AS n FROM processor_runs
       WHERE status = 'failed' AND id > coalesce((SELECT max(id) FROM processor_runs WHERE status = 'ok'), 0)`,
    );
    return row!.n;
  }

  /** Of `ids`, those a successful run already covered (learned from, but maybe not yet marked). */
  async alreadyLearned(ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const min = Math.min(...ids);
    const rows = await this.db.all<{ observation_ids: string }>(
      "SELECT observation_ids FROM processor_runs WHERE status = 'ok' AND last_observation_id >= ?",
      [min],
    );
    const wanted = new Set(ids);
    const covered = new Set<number>();
    for (const row of rows) for (const id of JSON.parse(row.observation_ids) as number[]) if (wanted.has(id)) covered.add(id);
    return covered;
  }

  async #insertLearning(q: Queryable, learning: NewLearning): Promise<number> {
    const { changes } = await q.run(
      // ON CONFLICT, not OR IGNORE: only a duplicate is skipped; a CHECK failure must still raise.
      `INSERT INTO learnings (created_at, session_id, type, content, source_observation_id, confidence, source, source_label)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (type, content) DO NOTHING`,
      [
        learning.createdAt ?? this.now(),
        learning.sessionId ?? null,
        learning.type,
        learning.content,
        learning.sourceObservationId ?? null,
        learning.confidence ?? null,
        learning.source ?? null,
        learning.sourceLabel ?? null,
      ],
    );
    return changes;
  }

  async #insertAction(q: Queryable, action: NewPendingAction): Promise<number> {
    const { lastInsertRowid } = await q.run(
      'INSERT INTO pending_actions (created_at, content, priority, source_learning_id, source, source_label) VALUES (?, ?, ?, ?, ?, ?)',
      [this.now(), action.content, action.priority ?? 'normal', action.sourceLearningId ?? null, action.source ?? null, action.sourceLabel ?? null],
    );
    return lastInsertRowid;
  }

  async #insertRun(q: Queryable, run: ProcessorRunRecord): Promise<void> {
    const ids = [...run.observationIds];
    await q.run(
      `INSERT INTO processor_runs (started_at, finished_at, model, status, failure, error, observation_ids,
         first_observation_id, last_observation_id, learnings_added, actions_added, files_updated)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        run.startedAt,
        this.now(),
        run.model,
        run.status,
        run.failure ?? null,
        run.error ?? null,
        JSON.stringify(ids),
        ids.length ? Math.min(...ids) : null,
        ids.length ? Math.max(...ids) : null,
        run.learningsAdded ?? 0,
        run.actionsAdded ?? 0,
        JSON.stringify(run.filesUpdated ?? []),
      ],
    );
  }
}

function toRun(row: Record<string, unknown>): ProcessorRun {
  return {
    id: row.id as number,
    startedAt: row.started_at as number,
    finishedAt: row.finished_at as number,
    model: row.model as string,
    status: row.status as 'ok' | 'failed',
    failure: (row.failure as RunFailure | null) ?? null,
    error: (row.error as string | null) ?? null,
    observationIds: JSON.parse(row.observation_ids as string) as number[],
    learningsAdded: row.learnings_added as number,
    actionsAdded: row.actions_added as number,
    filesUpdated: JSON.parse(row.files_updated as string) as string[],
  };
}
