// Shared set-up for memory/ unit tests: a stack's memory on MemoryVFS with in-memory files.
import { loadNodeSqlite, uniqueDbPath } from './node-sqlite.ts';
import { createInMemoryStackFiles, type InMemoryStackFiles } from './stack-files.ts';
import { openStackMemory, type StackMemory } from './stack-memory.ts';

export interface TestMemory extends StackMemory {
  readonly disk: InMemoryStackFiles;
  readonly paths: { transcript: string; memory: string };
  /** Moves the fake clock (ms). */
  tick(ms?: number): number;
}

/** Opens fresh databases (or the given ones, to reopen) with a fake clock starting at 2026-01-01. */
export async function openTestMemory(
  options: { disk?: InMemoryStackFiles; paths?: { transcript: string; memory: string } } = {},
): Promise<TestMemory> {
  const runtime = await loadNodeSqlite();
  const disk = options.disk ?? createInMemoryStackFiles();
  const paths = options.paths ?? { transcript: uniqueDbPath('transcript.db'), memory: uniqueDbPath('memory.db') };
  let clock = Date.UTC(2026, 0, 1);
  const memory = await openStackMemory({ runtime, vfs: 'memory', paths, files: disk, now: () => clock });
  return Object.assign(memory, {
    disk,
    paths,
    tick(ms = 1_000) {
      clock += ms;
      return clock;
    },
  });
}
