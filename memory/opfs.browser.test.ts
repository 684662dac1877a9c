// memory/ on the real OPFS in Chromium: a fresh dedicated worker per connection, as the stack
// worker will use it. Persistence across workers, two connections at once, the journal mode.
import { afterEach, describe, expect, it } from 'vitest';
import type { OpfsTestCommand } from './opfs-test-worker.ts';

const workers: Worker[] = [];

afterEach(() => {
  for (const worker of workers.splice(0)) worker.terminate();
});

function openWorker() {
  const worker = new Worker(new URL('./opfs-test-worker.ts', import.meta.url), { type: 'module' });
  workers.push(worker);
  let next = 0;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  worker.onmessage = (event) => {
    const { id, ok, result, error } = event.data;
    const waiter = pending.get(id)!;
    pending.delete(id);
    if (ok) waiter.resolve(result);
    else waiter.reject(new Error(error));
  };
  return <T = unknown>(command: OpfsTestCommand, ...args: unknown[]): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, command, args });
    });
}

interface State {
  observations: number;
  sequences: { session_id: string; n: number; last: number }[];
  unprocessed: number;
  learnings: number;
  userMd: string;
  search: { type: string; content: string }[];
  prompt: string;
  pragmas: Record<string, unknown>;
}

const correction = [
  'CORRECTION (1.0): Vendor names are always written in uppercase.',
  'USER_MD_UPDATE:',
  '<<<BEGIN user.md>>>',
  '# User',
  '## Preferences',
  '- Always write vendor names in UPPERCASE.',
  '<<<END user.md>>>',
].join('\n');

describe('memory on OPFS', () => {
  it('keeps observations, learnings and memory files across new workers', async () => {
    const stackId = `mem-${crypto.randomUUID().slice(0, 8)}`;
    const first = openWorker();
    expect(await first('open', stackId)).toEqual({ created: 7 });
    await first('converse', 's1', 3);
    await first('close');
    workers[0]!.terminate(); // like a reload: no clean shutdown beyond the commits

    const second = openWorker();
    expect(await second('open', stackId)).toEqual({ created: 0 });
    expect(await second<State>('state')).toMatchObject({ observations: 3, unprocessed: 3, learnings: 0 });
    expect(await second('process', correction)).toMatchObject({ status: 'done', remaining: 0 });
    await second('close');

    const third = openWorker();
    await third('open', stackId);
    const state = await third<State>('state');
    expect(state).toMatchObject({ observations: 3, unprocessed: 0, learnings: 1 });
    expect(state.userMd).toContain('Always write vendor names in UPPERCASE');
    expect(state.search[0]).toMatchObject({ type: 'correction' });
    expect(state.prompt).toContain('### Preferences\n- Always write vendor names in UPPERCASE.');
    expect(state.pragmas).toEqual({
      journal: { journal_mode: 'delete' },
      synchronous: { synchronous: 2 },
      foreignKeys: { foreign_keys: 1 },
    });
  });

  it('copies both databases whole with VACUUM INTO, and the copies open as the databases of another stack', async () => {
    const stackId = `mem-${crypto.randomUUID().slice(0, 8)}`;
    const first = openWorker();
    await first('open', stackId);
    await first('converse', 's1', 2);
    await first('process', correction);
    await first('snapshot', stackId);
    await first('close');
    // The copies moved into a second stack's place, as an import writes them.
    const stacks = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks');
    const from = await (await stacks.getDirectoryHandle(stackId)).getDirectoryHandle('.os');
    const copyId = `${stackId}-copy`;
    const to = await (await (await stacks.getDirectoryHandle(copyId, { create: true })).getDirectoryHandle('.os', { create: true })).getDirectoryHandle('memory', { create: true });
    for (const name of ['transcript.db', 'memory.db']) {
      const file = await (await (await from.getDirectoryHandle('snapshot')).getFileHandle(name)).getFile();
      const writable = await (await to.getFileHandle(name, { create: true })).createWritable();
      await writable.write(await file.arrayBuffer());
      await writable.close();
    }
    const second = openWorker();
    await second('open', copyId);
    const state = await second<State>('state');
    expect(state.observations).toBe(2);
    expect(state.learnings).toBe(1);
    expect(state.search[0]?.content).toContain('uppercase');
    await second('close');
  });

  it('loses no rows when two workers open and write one stack at the same time', async () => {
    const stackId = `two-${crypto.randomUUID().slice(0, 8)}`;
    const a = openWorker();
    const b = openWorker();
    // Both open a brand-new stack at once: both bootstrap and migrate; one wins each step.
    await Promise.all([a('open', stackId), b('open', stackId)]);
    await Promise.all([a('converse', 'tab-a', 40), b('converse', 'tab-b', 40)]);
    const state = await a<State>('state');
    expect(state.observations).toBe(80);
    expect(state.sequences).toEqual([
      { session_id: 'tab-a', n: 40, last: 40 },
      { session_id: 'tab-b', n: 40, last: 40 },
    ]);
    expect((await b<State>('state')).observations).toBe(80);
  });

  it('opens in two workers at once while terminated workers left temporary folders behind', async () => {
    // Each new connection first deletes the `.ahp-*` folders of workers that are gone; two of
    // them starting together pick the same ones, and the second finds them already removed.
    const root = await navigator.storage.getDirectory();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) await root.getDirectoryHandle(`.ahp-stale-${round}-${i}`, { create: true });
      const stackId = `sweep-${crypto.randomUUID().slice(0, 8)}`;
      const [a, b] = [openWorker(), openWorker()];
      await Promise.all([a('open', stackId), b('open', stackId)]);
      for (const worker of workers.splice(0)) worker.terminate();
    }
  });

  it('runs in DELETE journal mode: the VFS refuses TRUNCATE and PERSIST, and has no WAL', async () => {
    const call = openWorker();
    await call('open', `journal-${crypto.randomUUID().slice(0, 8)}`);
    expect(await call('journalModes')).toEqual({
      TRUNCATE: expect.stringMatching(/^error: .*disk I\/O error/),
      PERSIST: expect.stringMatching(/^error: .*disk I\/O error/),
      WAL: 'delete',
      MEMORY: 'memory',
      DELETE: 'delete',
    });
  });
});
