// search_memory: BM25-ranked full-text search over every learning, read-only. An empty query
// (or one with no words) returns the most recent learnings.
import type { Queryable } from './database.ts';
import { queryTerms, toFtsQuery } from './fts-query.ts';
import type { LearningType } from './memory-schema.ts';

export interface MemorySearchResult {
  id: number;
  type: LearningType;
  content: string;
  /** When it was learned, ISO 8601 (UTC). */
  date: string;
  createdAt: number;
  /** Set when the learning's words come from read content (a document, a page), not the user. */
  sourceLabel: string | null;
}

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;

interface ResultRow {
  id: number;
  type: LearningType;
  content: string;
  created_at: number;
  source: string | null;
  source_label: string | null;
}

/**
 * Above this many matches a query is too unselective to rank: BM25 would score every match (cost
 * grows with the matches, ~75 ms for 50k) and a word in most learnings has an IDF near zero, so
 * its scores say little. Such queries list the most recent matches instead.
 */
export const RANK_CAP = 2_000;

/** The statements a search runs, shared with the benchmark so both sides time the same SQL. */
export const RECENT_SQL = 'SELECT id, type, content, created_at, source, source_label FROM learnings ORDER BY created_at DESC, id DESC LIMIT ?';
/** Counts matches up to RANK_CAP + 1 (cheap: no scoring, stops early). */
export const COUNT_SQL = 'SELECT count(*) AS n FROM (SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ? LIMIT ?)';
/** FTS5's `rank` is bm25 with the column weights set in the schema (content above type). */
export const RANKED_SQL = `SELECT l.id, l.type, l.content, l.created_at, l.source, l.source_label
  FROM (SELECT rowid, rank FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rank LIMIT ?) AS hit
  JOIN learnings AS l ON l.id = hit.rowid
  ORDER BY hit.rank`;
/** Newest matches first; FTS5 walks the doclist from its end, so this stays cheap for common words. */
export const NEWEST_MATCHES_SQL = `SELECT l.id, l.type, l.content, l.created_at, l.source, l.source_label
  FROM (SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ? ORDER BY rowid DESC LIMIT ?) AS hit
  JOIN learnings AS l ON l.id = hit.rowid
  ORDER BY l.id DESC`;

/** The one method a search needs, so a caller can watch (or time) the statements it runs. */
export type SearchSource = Pick<Queryable, 'all'>;

/**
 * Learnings matching all words of `query`, best first (BM25); when none match all, those
 * matching any. A query matching more than RANK_CAP learnings lists the newest matches. An
 * empty query (or one without words) lists the newest learnings. Any text is accepted: user
 * input can never cause an FTS syntax error. Database failures still throw DbError.
 */
export async function searchMemory(db: SearchSource, query: string, limit = DEFAULT_SEARCH_LIMIT): Promise<MemorySearchResult[]> {
  const plan = planSearch(query, limit);
  if (plan.all === null) return (await db.all<ResultRow>(RECENT_SQL, [plan.limit])).map(toResult);
  let rows = await matching(db, plan.all, plan.limit);
  if (rows.length === 0 && plan.any !== null) rows = await matching(db, plan.any, plan.limit);
  return rows.map(toResult);
}

async function matching(db: SearchSource, match: string, limit: number): Promise<ResultRow[]> {
  const [counted] = await db.all<{ n: number }>(COUNT_SQL, [match, RANK_CAP + 1]);
  const n = counted?.n ?? 0;
  if (n === 0) return [];
  return db.all<ResultRow>(n > RANK_CAP ? NEWEST_MATCHES_SQL : RANKED_SQL, [match, limit]);
}

/** The MATCH expressions for a query: all words, then any word (null when there is one word or none). */
export function planSearch(query: string, limit: number): { all: string | null; any: string | null; limit: number } {
  const terms = queryTerms(String(query ?? ''));
  return {
    all: toFtsQuery(terms, 'AND'),
    any: terms.length > 1 ? toFtsQuery(terms, 'OR') : null,
    limit: clampLimit(limit),
  };
}

function clampLimit(limit: number): number {
  const n = Math.floor(Number(limit));
  if (!Number.isFinite(n) || n < 1) return DEFAULT_SEARCH_LIMIT;
  return Math.min(n, MAX_SEARCH_LIMIT);
}

function toResult(row: ResultRow): MemorySearchResult {
  return {
    id: row.id,
    type: row.type,
    content: row.content,
    date: new Date(row.created_at).toISOString(),
    createdAt: row.created_at,
    sourceLabel: row.source === 'content' ? row.source_label : null,
  };
}
