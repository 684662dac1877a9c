// The native side of the memory benchmark: Debian's sqlite3 CLI on the same schema, rows and
// statements, timed per statement by the CLI's own `.timer` (CPU time, microsecond resolution).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MEMORY_MIGRATIONS } from './memory-schema.ts';
import type { NewLearning } from './memory-store.ts';

export interface NativeTiming {
  /** sqlite3 --version, first word. */
  version: string;
  /** Seconds the CLI took to load the rows (one transaction, FTS triggers included). */
  loadSeconds: number;
  /** Per query: milliseconds per timed run (the sum of its statements). */
  perQuery: number[][];
}

/** The sqlite3 binary's version, or undefined when it is not installed. */
export function nativeSqliteVersion(binary = 'sqlite3'): string | undefined {
  const probe = spawnSync(binary, ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return undefined;
  return probe.stdout.trim().split(/\s+/)[0];
}

/**
 * Loads `learnings` into a fresh database file with the memory.db schema, then runs each query's
 * statements `runs` times (after one warm-up) and returns the timings. Statements are SQL with
 * their parameters already inlined as literals.
 */
export function timeNativeQueries(
  learnings: readonly NewLearning[],
  queries: readonly string[][],
  runs: number,
  binary = 'sqlite3',
): NativeTiming {
  const version = nativeSqliteVersion(binary);
  if (!version) throw new Error(`${binary} is not installed (apt-get install -y sqlite3).`);
  const dir = mkdtempSync(join(tmpdir(), 'stackdocs-bench-'));
  try {
    const dbPath = join(dir, 'memory.db');
    const load = [
      'PRAGMA journal_mode = DELETE;',
      'PRAGMA synchronous = FULL;',
      'BEGIN;',
      ...MEMORY_MIGRATIONS.map((m) => m.sql),
      ...learnings.map(
        (l) =>
          `INSERT INTO learnings (created_at, session_id, type, content, confidence) VALUES (${l.createdAt ?? 0}, ${literal(l.sessionId ?? null)}, ${literal(l.type)}, ${literal(l.content)}, ${l.confidence ?? 'NULL'});`,
      ),
      'COMMIT;',
    ].join('\n');
    const started = performance.now();
    run(binary, [dbPath], load);
    const loadSeconds = (performance.now() - started) / 1000;

    const script: string[] = ['.timer on', '.output /dev/null'];
    for (let round = 0; round <= runs; round++) for (const statements of queries) script.push(...statements.map((sql) => `${sql};`));
    const output = run(binary, [dbPath], script.join('\n'));
    const times = [...output.matchAll(/Run Time: real [\d.]+ user ([\d.]+) sys ([\d.]+)/g)].map((m) => (Number(m[1]) + Number(m[2])) * 1000);
    const expected = (runs + 1) * queries.reduce((sum, statements) => sum + statements.length, 0);
    if (times.length !== expected) throw new Error(`sqlite3 printed ${times.length} timings, expected ${expected}: ${output.slice(0, 500)}`);

    const perQuery: number[][] = queries.map(() => []);
    let next = 0;
    for (let round = 0; round <= runs; round++) {
      queries.forEach((statements, q) => {
        let total = 0;
        for (let s = 0; s < statements.length; s++) total += times[next++]!;
        if (round > 0) perQuery[q]!.push(total); // round 0 warms the page cache
      });
    }
    return { version, loadSeconds, perQuery };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A SQL literal: numbers as they are, text single-quoted with quotes doubled. */
export function literal(value: string | number | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  return `'${value.replace(/'/g, "''")}'`;
}

function run(binary: string, args: string[], input: string): string {
  const result = spawnSync(binary, ['-bail', ...args], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${binary} failed (${result.status}): ${result.stderr.slice(0, 500)}`);
  return result.stdout;
}
