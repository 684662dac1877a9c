// The memory benchmark (Node): insert rate into memory.db, search latency over N learnings, and
// the same searches by Debian's sqlite3 on the same rows, measured in the same run.
import { generateBenchData } from './bench-data.ts';
import { literal, nativeSqliteVersion, timeNativeQueries } from './bench-native.ts';
import { openDatabase } from './database.ts';
import { MemoryStore } from './memory-store.ts';
import { MEMORY_MIGRATIONS } from './memory-schema.ts';
import { migrate } from './migrations.ts';
import { loadNodeSqlite, uniqueDbPath } from './node-sqlite.ts';
import { searchMemory, type SearchSource } from './search.ts';

export interface MemoryBenchOptions {
  /** Learnings to insert and search (the figure is 100k). */
  learnings?: number;
  /** Timed runs of every query, after one warm-up run. */
  runs?: number;
  /** Learnings per insert transaction. */
  batchSize?: number;
  seed?: number;
  /** Compare with the sqlite3 CLI (skipped with a reason when it is not installed). */
  native?: boolean;
  sqliteBinary?: string;
}

export interface LatencySummary {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export interface MemoryBenchResult {
  learnings: number;
  queries: number;
  sqliteVersion: string;
  insert: { rows: number; ms: number; rowsPerSecond: number };
  search: LatencySummary;
  native:
    | { version: string; loadSeconds: number; loadRowsPerSecond: number; search: LatencySummary; ratioP50: number; ratioP95: number }
    | { skipped: string };
}

const SEARCH_LIMIT = 10;

export async function runMemoryBench(options: MemoryBenchOptions = {}): Promise<MemoryBenchResult> {
  const count = options.learnings ?? 100_000;
  const runs = options.runs ?? 10;
  const batchSize = options.batchSize ?? 1_000;
  const { learnings, queries } = generateBenchData(count, options.seed ?? 42);

  const runtime = await loadNodeSqlite();
  const db = await openDatabase(runtime, { path: uniqueDbPath('bench-memory.db'), vfs: 'memory', name: 'memory.db' });
  try {
    await migrate(db, MEMORY_MIGRATIONS);
    const store = new MemoryStore(db);

    const insertStart = performance.now();
    for (let i = 0; i < learnings.length; i += batchSize) await store.addLearnings(learnings.slice(i, i + batchSize));
    const insertMs = performance.now() - insertStart;
    const rows = await store.countLearnings();

    const ours: number[][] = queries.map(() => []);
    for (let round = 0; round <= runs; round++) {
      for (const [q, query] of queries.entries()) {
        const started = performance.now();
        await searchMemory(db, query, SEARCH_LIMIT);
        if (round > 0) ours[q]!.push(performance.now() - started);
      }
    }
    const search = summarise(ours.flat());

    let native: MemoryBenchResult['native'];
    const binary = options.sqliteBinary ?? 'sqlite3';
    if (options.native === false) native = { skipped: 'disabled' };
    else if (!nativeSqliteVersion(binary)) native = { skipped: `${binary} not installed (apt-get install -y sqlite3)` };
    else {
      const statements = await Promise.all(queries.map((query) => nativeStatements(db, query)));
      const timing = timeNativeQueries(learnings, statements, runs, binary);
      const nativeSearch = summarise(timing.perQuery.flat());
      native = {
        version: timing.version,
        loadSeconds: timing.loadSeconds,
        // Includes the CLI parsing 100k INSERT statements: a rough comparison only.
        loadRowsPerSecond: rows / timing.loadSeconds,
        search: nativeSearch,
        ratioP50: search.p50Ms / nativeSearch.p50Ms,
        ratioP95: search.p95Ms / nativeSearch.p95Ms,
      };
    }
    return {
      learnings: rows,
      queries: queries.length,
      sqliteVersion: runtime.version,
      insert: { rows, ms: insertMs, rowsPerSecond: rows / (insertMs / 1000) },
      search,
      native,
    };
  } finally {
    await db.close();
  }
}

/** The statements searchMemory runs for `query`, recorded, with parameters inlined for the CLI. */
async function nativeStatements(db: SearchSource, query: string): Promise<string[]> {
  const statements: string[] = [];
  const recorder: SearchSource = {
    all: (sql, params = []) => {
      statements.push(inline(sql, params as (string | number)[]));
      return db.all(sql, params);
    },
  };
  await searchMemory(recorder, query, SEARCH_LIMIT);
  return statements;
}

function inline(sql: string, params: (string | number)[]): string {
  let i = 0;
  return sql.replace(/\?/g, () => literal(params[i++]!)).replace(/\s+/g, ' ');
}

export function summarise(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { samples: sorted.length, p50Ms: at(0.5), p95Ms: at(0.95), maxMs: sorted.at(-1) ?? 0 };
}

/** One line per figure, named as the issue names them. */
export function formatMemoryBench(result: MemoryBenchResult): string[] {
  const ms = (value: number) => `${value.toFixed(3)} ms`;
  const k = result.learnings >= 1000 ? `${Math.round(result.learnings / 1000)}k` : String(result.learnings);
  const lines = [
    `memory.search_${k}  p50 ${ms(result.search.p50Ms)}  p95 ${ms(result.search.p95Ms)}  max ${ms(result.search.maxMs)}  ` +
      `(${result.search.samples} searches, ${result.queries} queries; goal < 2 / < 10)`,
    `memory.insert  ${Math.round(result.insert.rowsPerSecond).toLocaleString('en-US')} rows/s  (${result.insert.rows.toLocaleString('en-US')} learnings with FTS5, 1k per transaction, SQLite ${result.sqliteVersion})`,
  ];
  if ('skipped' in result.native) lines.push(`memory.search_vs_native  skipped: ${result.native.skipped}`);
  else {
    const n = result.native;
    lines.push(
      `memory.search_vs_native  ${n.ratioP50.toFixed(2)}x at p50, ${n.ratioP95.toFixed(2)}x at p95  ` +
        `(ours ${ms(result.search.p50Ms)} / sqlite3 ${n.version} ${ms(n.search.p50Ms)}; native p95 ${ms(n.search.p95Ms)}; ` +
        `native load ${Math.round(n.loadRowsPerSecond).toLocaleString('en-US')} rows/s)`,
    );
  }
  return lines;
}
