// Every stack file of the hostile corpus (tests/fixtures/hostile-stacks.ts) through the real
// importer in Chromium's OPFS: each is refused with its own reason, fast, and leaves nothing
// behind; a good file made by the same writer opens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StackFolders } from '../stack-folders.ts';
import { foldersIn } from './test-folders.ts';
import type { StorageEstimateLike } from '../../storage/quota.ts';
import { HOSTILE_IMAGE, hostileStacks, plainStackFile, type HostileStack } from '../../tests/fixtures/hostile-stacks.ts';

const ROOMY: StorageEstimateLike = { usage: 1_000_000, quota: 10_000_000_000 };
let area = '';
let estimate: StorageEstimateLike = ROOMY;
let folders: StackFolders;
let corpus: HostileStack[] = [];

async function stacksDir() {
  return (await navigator.storage.getDirectory()).getDirectoryHandle(area, { create: true });
}

async function folderNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const [name] of (await stacksDir() as unknown as { entries(): AsyncIterable<[string, unknown]> }).entries()) names.push(name);
  return names;
}

beforeAll(async () => {
  area = `hostile-stacks-${crypto.randomUUID().slice(0, 8)}`;
  folders = foldersIn(area, stacksDir, { estimate: async () => estimate, idPrefix: 's-hostile', releaseWaitMs: 2_000 });
  corpus = await hostileStacks();
}, 60_000);

afterAll(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

describe('the hostile stack corpus', () => {
  it('opens the plain file its writer makes, under a name told apart from a stack of the same name', async () => {
    estimate = ROOMY;
    const first = await folders.importStack(new Blob([(await plainStackFile()).slice()]), { appImage: HOSTILE_IMAGE, signal: new AbortController().signal });
    const second = await folders.importStack(new Blob([(await plainStackFile()).slice()]), { appImage: HOSTILE_IMAGE, signal: new AbortController().signal });
    expect([first.stack.name, second.stack.name]).toEqual(['Hostile', 'Hostile (imported)']);
    for (const made of [first, second]) await (await stacksDir()).removeEntry(made.stack.id, { recursive: true });
  });

  it('has at least 60 files, each named once', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    expect(new Set(corpus.map((stack) => stack.name)).size).toBe(corpus.length);
  });

  it('refuses every file with its own reason, in seconds, leaving no stack behind', async () => {
    const wrong: string[] = [];
    for (const stack of corpus) {
      estimate = stack.estimate ?? ROOMY;
      const started = performance.now();
      const outcome = await folders.importStack(new Blob([stack.bytes.slice()]), { appImage: HOSTILE_IMAGE, signal: new AbortController().signal }).then(
        () => 'imported',
        (error: Error) => error.message,
      );
      const ms = performance.now() - started;
      const matches = typeof stack.says === 'string' ? outcome.includes(stack.says) : stack.says.test(outcome);
      if (!matches) wrong.push(`${stack.name} (${stack.what}): ${outcome}`);
      if (ms > 5_000) wrong.push(`${stack.name}: took ${Math.round(ms)} ms`);
      const left = await folderNames();
      if (left.length) wrong.push(`${stack.name}: left ${left.join(', ')}`);
    }
    expect(wrong).toEqual([]);
  }, 240_000);
});
