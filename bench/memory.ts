// memory.search_100k, memory.insert and memory.search_vs_native (against Debian's sqlite3 on the
// same rows and statements, in the same run). Native sqlite3 is installed when missing and root.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { runMemoryBench } from '../memory/bench.ts';
import { report, round } from './stats.ts';

function ensureSqlite3(): void {
  if (existsSync('/usr/bin/sqlite3') || process.getuid?.() !== 0) return;
  spawnSync('apt-get', ['install', '-y', '-qq', 'sqlite3'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

export async function benchMemory(): Promise<void> {
  ensureSqlite3();
  const result = await runMemoryBench({ learnings: 100_000, runs: 10 });
  const { search, insert, native } = result;
  report({ bench: 'memory.search_100k', value: round(search.p50Ms, 3), unit: 'ms', n: search.samples, p50: round(search.p50Ms, 3), p95: round(search.p95Ms, 3), max: round(search.maxMs, 3), goal: '<2 / <10' });
  report({ bench: 'memory.insert', value: Math.round(insert.rowsPerSecond), unit: 'rows/s', n: insert.rows });
  if ('skipped' in native) {
    console.error(`memory.search_vs_native skipped: ${native.skipped}`);
    return;
  }
  report({
    bench: 'memory.search_vs_native',
    value: round(native.ratioP50),
    unit: 'ratio',
    n: native.search.samples,
    p50: round(native.ratioP50),
    p95: round(native.ratioP95),
    ours_p50_ms: round(search.p50Ms, 3),
    native_p50_ms: round(native.search.p50Ms, 3),
    native_version: native.version,
  });
}
