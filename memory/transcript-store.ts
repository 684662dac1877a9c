// transcript.db access: sessions and observations for the memory hooks, the processed mark for
// the processor, and the persisted event log for the worker's event stream.
import type { Database } from './database.ts';
import { OBSERVATION_LIMITS, truncateText } from './truncate.ts';

export interface ToolCallSummary {
  name: string;
  ok: boolean;
  /** Input and output in a few words; cut to OBSERVATION_LIMITS.toolSummary. */
  summary: string;
  /** What the call touched (a path, an address, a command), when its input names one. */
  target?: string;
}

export interface NewObservation {
  sessionId: string;
  userMessage: string;
  toolCalls: readonly ToolCallSummary[];
  agentResponse: string;
  timestamp?: number;
}

export interface Observation {
  id: number;
  timestamp: number;
  sessionId: string;
  sequenceNum: number;
  userMessage: string;
  toolCalls: ToolCallSummary[];
  agentResponse: string;
  processed: boolean;
}

export interface SessionRecord {
  id: string;
  startedAt: number;
  endedAt: number | null;
  messageCount: number;
  observationCount: number;
}

/** A persisted event: the worker's StackEvent, stored whole as JSON under its seq. */
export interface LoggedEvent {
  seq: number;
  type: string;
  at: number;
}

interface ObservationRow {
  id: number;
  timestamp: number;
  session_id: string;
  sequence_num: number;
  user_message: string;
  tool_calls_json: string;
  agent_response: string;
  processed: number;
}

interface SessionRow {
  id: string;
  started_at: number;
  ended_at: number | null;
  message_count: number;
  observation_count: number;
}

export class TranscriptStore {
  constructor(
    readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async startSession(id: string = newSessionId()): Promise<SessionRecord> {
    await this.db.run('INSERT INTO sessions (id, started_at) VALUES (?, ?)', [id, this.now()]);
    return (await this.getSession(id))!;
  }

  /** Sets ended_at once; ending an ended session keeps the first time. */
  async endSession(id: string): Promise<void> {
    await this.db.run('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL', [this.now(), id]);
  }

  async getSession(id: string): Promise<SessionRecord | undefined> {
    const row = await this.db.get<SessionRow>('SELECT * FROM sessions WHERE id = ?', [id]);
    return row && toSession(row);
  }

  /** Appends one turn, cutting oversized fields with a marker (never dropping the turn). */
  async appendObservation(input: NewObservation): Promise<Observation> {
    const toolCalls = limitToolCalls(input.toolCalls);
    const userMessage = truncateText(input.userMessage, OBSERVATION_LIMITS.userMessage);
    const agentResponse = truncateText(input.agentResponse, OBSERVATION_LIMITS.agentResponse);
    const timestamp = input.timestamp ?? this.now();
    const id = await this.db.transaction(async (tx) => {
      const next = await tx.get<{ n: number }>(
        'SELECT coalesce(max(sequence_num), 0) + 1 AS n FROM observations WHERE session_id = ?',
        [input.sessionId],
      );
      const { lastInsertRowid } = await tx.run(
        `INSERT INTO observations (timestamp, session_id, sequence_num, user_message, tool_calls_json, agent_response)
         VALUES (?, ?, ?, ?, ?, ?)`,
        [timestamp, input.sessionId, next!.n, userMessage, JSON.stringify(toolCalls), agentResponse],
      );
      await tx.run(
        'UPDATE sessions SET observation_count = observation_count + 1, message_count = message_count + ? WHERE id = ?',
        [userMessage ? 1 : 0, input.sessionId],
      );
      return lastInsertRowid;
    });
    return (await this.getObservation(id))!;
  }

  async getObservation(id: number): Promise<Observation | undefined> {
    const row = await this.db.get<ObservationRow>('SELECT * FROM observations WHERE id = ?', [id]);
    return row && toObservation(row);
  }

  /** Unprocessed observations, oldest first. */
  async unprocessed(limit = 1_000): Promise<Observation[]> {
    const rows = await this.db.all<ObservationRow>('SELECT * FROM observations WHERE processed = 0 ORDER BY id LIMIT ?', [limit]);
    return rows.map(toObservation);
  }

  async countUnprocessed(): Promise<number> {
    return (await this.db.get<{ n: number }>('SELECT count(*) AS n FROM observations WHERE processed = 0'))!.n;
  }

  /** Marks the observations processed in one transaction; returns how many changed. */
  async markProcessed(ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.db.transaction(async (tx) => {
      let changed = 0;
      for (const id of ids) changed += (await tx.run('UPDATE observations SET processed = 1 WHERE id = ? AND processed = 0', [id])).changes;
      return changed;
    });
  }

  /** Appends events in one transaction. A seq already logged is a DbConstraintError. */
  async appendEvents(events: readonly LoggedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.db.transaction(async (tx) => {
      for (const event of events) {
        await tx.run('INSERT INTO events (seq, type, json, at) VALUES (?, ?, ?, ?)', [event.seq, event.type, JSON.stringify(event), event.at]);
      }
    });
  }

  /** Events with seq > afterSeq, oldest first, as they were appended. */
  async eventsSince<E extends LoggedEvent = LoggedEvent>(afterSeq: number, limit = 10_000): Promise<E[]> {
    const rows = await this.db.all<{ json: string }>('SELECT json FROM events WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]);
    return rows.map((row) => JSON.parse(row.json) as E);
  }

  /** 0 when no event was logged yet; a reloaded worker continues numbering after it. */
  async lastEventSeq(): Promise<number> {
    return (await this.db.get<{ seq: number | null }>('SELECT max(seq) AS seq FROM events'))?.seq ?? 0;
  }
}

export function newSessionId(): string {
  return `sess_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

function limitToolCalls(calls: readonly ToolCallSummary[]): ToolCallSummary[] {
  const max = OBSERVATION_LIMITS.toolCalls;
  const kept = calls.slice(0, max).map((call) => ({
    name: truncateText(String(call.name), 200),
    ok: Boolean(call.ok),
    summary: truncateText(String(call.summary), OBSERVATION_LIMITS.toolSummary),
    ...(typeof call.target === 'string' && call.target ? { target: truncateText(call.target, 200) } : {}),
  }));
  if (calls.length > max) kept.push({ name: '(more)', ok: true, summary: `... and ${calls.length - max} more tool calls, not recorded` });
  return kept;
}

function toObservation(row: ObservationRow): Observation {
  return {
    id: row.id,
    timestamp: row.timestamp,
    sessionId: row.session_id,
    sequenceNum: row.sequence_num,
    userMessage: row.user_message,
    toolCalls: JSON.parse(row.tool_calls_json) as ToolCallSummary[],
    agentResponse: row.agent_response,
    processed: row.processed === 1,
  };
}

function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    messageCount: row.message_count,
    observationCount: row.observation_count,
  };
}
