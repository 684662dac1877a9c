import { describe, expect, it } from 'vitest';
import { generateBenchData, seededRandom } from './bench-data.ts';
import { nativeSqliteVersion } from './bench-native.ts';
import { formatMemoryBench, runMemoryBench, summarise } from './bench.ts';

describe('memory benchmark', () => {
  it('generates the same data for the same seed', () => {
    expect(generateBenchData(50, 7)).toEqual(generateBenchData(50, 7));
    expect(generateBenchData(50, 7).learnings).toHaveLength(50);
    const random = seededRandom(1);
    expect([random(), random()]).toEqual([seededRandom(1)(), (() => { const r = seededRandom(1); r(); return r(); })()]);
  });

  it('summarises latencies as percentiles', () => {
    expect(summarise([5, 1, 4, 2, 3])).toEqual({ samples: 5, p50Ms: 3, p95Ms: 5, maxMs: 5 });
    expect(summarise([])).toEqual({ samples: 0, p50Ms: 0, p95Ms: 0, maxMs: 0 });
  });

  it('runs end to end on a small data set, with the native comparison when sqlite3 is installed', async () => {
    const result = await runMemoryBench({ learnings: 2_000, runs: 1 });
    expect(result.learnings).toBe(2_000);
    expect(result.insert.rowsPerSecond).toBeGreaterThan(0);
    expect(result.search.samples).toBe(result.queries);
    if (nativeSqliteVersion()) {
      expect(result.native).toMatchObject({ search: { samples: result.queries }, ratioP50: expect.any(Number) });
    } else {
      expect(result.native).toMatchObject({ skipped: expect.stringContaining('not installed') });
    }
    const lines = formatMemoryBench(result);
    expect(lines[0]).toMatch(/^memory\.search_2k {2}p50 /);
    expect(lines[1]).toMatch(/^memory\.insert {2}[\d,]+ rows\/s/);
    expect(lines[2]).toMatch(/^memory\.search_vs_native /);
  });
});
