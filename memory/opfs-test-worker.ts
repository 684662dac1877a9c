// A dedicated worker for memory's browser tests (opfs.browser.test.ts): opens a stack's memory on
// OPFS exactly as the stack worker will, and runs commands sent as `{id, command, args}`.
import wasmUrl from '@journeyapps/wa-sqlite/dist/wa-sqlite.wasm?url';
import { messageOf } from './db-errors.ts';
import type { ObservationProcessor } from './processor.ts';
import { opfsSnapshotPath } from './layout.ts';
import { loadSqlite } from './sqlite-runtime.ts';
import { openOpfsStackMemory, type StackMemory } from './stack-memory.ts';

const runtime = loadSqlite({ wasmUrl });
let memory: StackMemory | undefined;

const idle: ObservationProcessor = {
  processBatch: async () => ({ status: 'empty' }),
  flushAll: async () => ({ status: 'done', batches: [], remaining: 0 }),
};

const commands = {
  async open(stackId: string) {
    memory = await openOpfsStackMemory({ runtime: await runtime, stackId });
    return { created: memory.bootstrap.created.length };
  },

  /** `turns` turns in a new session, each written as one observation. */
  async converse(sessionId: string, turns: number) {
    const { hooks } = await memory!.startSession({ processor: idle, sessionId });
    for (let i = 0; i < turns; i++) {
      await hooks.userPromptSubmit(`${sessionId} turn ${i}`);
      hooks.agentText(`answer ${i}`);
      const stopped = await hooks.stop();
      if (!stopped.ok) throw new Error(stopped.error.message);
    }
    await memory!.transcript.endSession(sessionId);
  },

  /** A batch through a scripted model that always gives `reply`. */
  async process(reply: string) {
    const processor = memory!.createProcessor({ complete: async () => reply });
    return processor.flushAll();
  },

  async state() {
    const m = memory!;
    const count = async (sql: string) => (await m.transcript.db.get<{ n: number }>(sql))!.n;
    return {
      observations: await count('SELECT count(*) AS n FROM observations'),
      sequences: await m.transcript.db.all('SELECT session_id, count(*) AS n, max(sequence_num) AS last FROM observations GROUP BY session_id ORDER BY session_id'),
      unprocessed: await m.transcript.countUnprocessed(),
      learnings: await m.memory.countLearnings(),
      userMd: await m.files.read('user.md'),
      search: await m.search('vendor uppercase'),
      prompt: (await m.loadPrompt()).text,
      pragmas: {
        journal: await m.memory.db.get('PRAGMA journal_mode'),
        synchronous: await m.memory.db.get('PRAGMA synchronous'),
        foreignKeys: await m.memory.db.get('PRAGMA foreign_keys'),
      },
    };
  },

  /** What the VFS does with each journal mode, on a scratch database of this stack. */
  async journalModes() {
    const db = memory!.transcript.db;
    const outcomes: Record<string, string> = {};
    for (const mode of ['TRUNCATE', 'PERSIST', 'WAL', 'MEMORY', 'DELETE']) {
      try {
        outcomes[mode] = String((await db.get<{ journal_mode: string }>(`PRAGMA journal_mode = ${mode}`))?.journal_mode);
      } catch (error) {
        outcomes[mode] = `error: ${messageOf(error)}`;
      }
    }
    return outcomes;
  },

  /** `VACUUM INTO` the stack's `.os/snapshot/`, as an export does. */
  async snapshot(stackId: string) {
    const stack = await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle(stackId);
    await (await stack.getDirectoryHandle('.os')).getDirectoryHandle('snapshot', { create: true });
    await memory!.snapshot({ transcript: opfsSnapshotPath(stackId, 'transcript'), memory: opfsSnapshotPath(stackId, 'memory') });
  },

  async close() {
    await memory?.close();
    memory = undefined;
  },
};

export type OpfsTestCommand = keyof typeof commands;

self.onmessage = async (event: MessageEvent<{ id: number; command: OpfsTestCommand; args: unknown[] }>) => {
  const { id, command, args } = event.data;
  try {
    const run = commands[command] as (...a: unknown[]) => Promise<unknown>;
    self.postMessage({ id, ok: true, result: await run(...args) });
  } catch (error) {
    self.postMessage({ id, ok: false, error: `${(error as Error)?.name}: ${messageOf(error)}` });
  }
};
