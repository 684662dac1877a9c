// The stacks' folders in real Chromium OPFS, with real Web Locks: names and sizes, a duplicate
// that copies every file (the computer's too) and is then independent, and the refusals: a stack
// open in another tab, a copy that will not fit, the last stack.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stackLockName } from '../protocol/stacks-api.ts';
import { copyFolder, folderSize } from '../storage/walk.ts';
import { createStackFolders, webStackLocks, type StackFolders } from './stack-folders.ts';
import { finishRestore } from './stack-folders-restore.ts';
import type { StorageEstimateLike } from '../storage/quota.ts';
import { checkpointKinds, openCheckpointStore } from './checkpoints/checkpoints.ts';
import { checkpointSources } from './checkpoints/sources.ts';

let area = '';
let estimate: StorageEstimateLike | undefined;
let folders: StackFolders;
const releases: (() => void)[] = [];

async function stacksDir() {
  return (await navigator.storage.getDirectory()).getDirectoryHandle(area, { create: true });
}

async function put(path: string, bytes: Uint8Array | string) {
  const parts = path.split('/');
  let dir = await stacksDir();
  for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
  const writable = await (await dir.getFileHandle(parts.at(-1)!, { create: true })).createWritable();
  await writable.write(typeof bytes === 'string' ? bytes : bytes.slice());
  await writable.close();
}

async function read(path: string): Promise<string | null> {
  const parts = path.split('/');
  try {
    let dir = await stacksDir();
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
    return await (await (await dir.getFileHandle(parts.at(-1)!)).getFile()).text();
  } catch {
    return null;
  }
}

/** Holds a stack's lock as another tab would, until released. */
async function holdElsewhere(stackId: string) {
  let release!: () => void;
  const held = new Promise<void>((acquired) => {
    void navigator.locks.request(`${area}:${stackLockName(stackId)}`, () => {
      acquired();
      return new Promise<void>((done) => (release = done));
    });
  });
  await held;
  releases.push(() => release());
}

beforeEach(async () => {
  area = `stacks-test-${crypto.randomUUID().slice(0, 8)}`;
  estimate = { usage: 1_000_000, quota: 10_000_000_000 };
  let n = 0;
  folders = createStackFolders({
    stacksDir,
    // Lock names of their own, so tests never meet a real stack's tab.
    locks: webStackLocks(navigator.locks, (id) => `${area}:${stackLockName(id)}`),
    estimate: async () => estimate,
    newId: () => `s-copy${++n}`,
    releaseWaitMs: 3_000,
  });
});

afterEach(async () => {
  releases.splice(0).forEach((release) => release());
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

describe('stack folders', () => {
  it('lists every stack with its name and the sum of its files, the first one first', async () => {
    await put('default/.os/memory/memory.db', new Uint8Array(4096));
    await put('default/documents/a.txt', 'hello');
    await put('s-later/.os/config/stack.json', JSON.stringify({ name: 'Client work', created_at: 5 }));
    await put('s-later/documents/b.txt', 'abc');
    const report = await folders.list();
    expect(report.stacks.map(({ id, name }) => ({ id, name }))).toEqual([
      { id: 'default', name: 'My stack' },
      { id: 's-later', name: 'Client work' },
    ]);
    expect(report.stacks[0]!.bytes).toBe(4096 + 5);
    const meta = (await read('s-later/.os/config/stack.json'))!;
    expect(report.stacks[1]!.bytes).toBe(3 + meta.length);
    expect(report).toMatchObject({ usage: 1_000_000, quota: 10_000_000_000 });
  });

  it('records the names the app knew for stacks that have none, and renames', async () => {
    await put('s-old/documents/x.txt', 'x');
    expect((await folders.list([{ id: 's-old', name: 'Taxes 2025' }])).stacks[0]!.name).toBe('Taxes 2025');
    expect(JSON.parse((await read('s-old/.os/config/stack.json'))!)).toMatchObject({ name: 'Taxes 2025' });
    expect(await folders.rename('s-old', '  Taxes   2026 ')).toMatchObject({ id: 's-old', name: 'Taxes 2026' });
    expect((await folders.list()).stacks[0]!.name).toBe('Taxes 2026');
    await expect(folders.rename('s-old', '   ')).rejects.toMatchObject({ shape: { code: 'bad_request' } });
    await expect(folders.rename('s-gone', 'x')).rejects.toMatchObject({ shape: { code: 'not_found' } });
  });

  it('creates a stack with its name and nothing else', async () => {
    const made = await folders.create('Receipts');
    expect(made).toMatchObject({ id: 's-copy1', name: 'Receipts' });
    expect((await folders.list()).stacks.map((stack) => stack.name)).toEqual(['Receipts']);
  });

  it('duplicates every file of a stack, the computer folder whatever it holds, into an independent copy', async () => {
    const disk = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7) & 255);
    await put('default/.os/memory/transcript.db', 'transcript');
    await put('default/documents/note.txt', 'original text');
    await put('default/.os/vm/overlay.data', disk);
    await put('default/.os/vm/deep/folder/any.bin', 'whatever the machine keeps');
    const started = performance.now();
    const copy = await folders.duplicate('default', 'My stack (copy)', false);
    console.info(`duplicated a stack of ${(disk.length / 1e6).toFixed(1)} MB in ${Math.round(performance.now() - started)} ms`);
    expect(copy).toMatchObject({ id: 's-copy1', name: 'My stack (copy)' });
    expect(await read('s-copy1/documents/note.txt')).toBe('original text');
    expect(await read('s-copy1/.os/memory/transcript.db')).toBe('transcript');
    expect(await read('s-copy1/.os/vm/deep/folder/any.bin')).toBe('whatever the machine keeps');
    const dir = await stacksDir();
    const overlay = await (await (await (await (await dir.getDirectoryHandle('s-copy1')).getDirectoryHandle('.os')).getDirectoryHandle('vm')).getFileHandle('overlay.data')).getFile();
    const bytes = new Uint8Array(await overlay.arrayBuffer());
    expect(bytes.length).toBe(disk.length);
    expect(bytes.every((byte, i) => byte === disk[i])).toBe(true);
    // Only the name differs: the copy's size is the original's plus its record.
    const sizes = Object.fromEntries((await folders.list()).stacks.map((stack) => [stack.id, stack.bytes]));
    const record = (await read('s-copy1/.os/config/stack.json'))!.length;
    expect(sizes['s-copy1']).toBe(sizes['default']! + record);

    // Independent: a file written in the copy is not in the original, and the other way round.
    await put('s-copy1/documents/only-in-copy.txt', 'new');
    await put('default/documents/note.txt', 'changed in the original');
    expect(await read('default/documents/only-in-copy.txt')).toBeNull();
    expect(await read('s-copy1/documents/note.txt')).toBe('original text');
  });

  it('will not copy a stack open in another tab, nor delete one', async () => {
    await put('default/documents/a.txt', 'a');
    await put('s-other/documents/b.txt', 'b');
    await holdElsewhere('default');
    await expect(folders.checkDuplicate('default', false)).rejects.toMatchObject({ shape: { code: 'busy', message: expect.stringContaining('open in another tab') } });
    await expect(folders.duplicate('default', 'copy', false)).rejects.toMatchObject({ shape: { code: 'busy' } });
    await expect(folders.remove('default', false)).rejects.toMatchObject({ shape: { code: 'busy' } });
    expect(await read('default/documents/a.txt')).toBe('a');
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default', 's-other']);
    // The tab that holds it (the caller) may: it closed its worker first.
    await expect(folders.duplicate('default', 'copy', true)).resolves.toMatchObject({ id: 's-copy1' });
  });

  it('refuses a copy that will not fit, naming both sizes, and writes nothing', async () => {
    await put('default/documents/big.bin', new Uint8Array(2_500_000));
    estimate = { usage: 9_999_000_000, quota: 10_000_000_000 };
    const refusal = folders.duplicate('default', 'copy', false);
    await expect(refusal).rejects.toMatchObject({
      shape: { code: 'storage', message: '"My stack" was not duplicated: it needs 2.5 MB and the browser\'s storage for Stackdocs has 1.0 MB left (it holds 10.0 GB). Delete documents or stacks you no longer need, or free space on this device, then try again.' },
    });
    await expect(folders.checkDuplicate('default', false)).rejects.toMatchObject({ shape: { code: 'storage' } });
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default']);
  });

  it('removes a copy cut short instead of listing it', async () => {
    await put('default/documents/a.txt', 'a');
    await put('s-half/.os/config/stack.json', JSON.stringify({ name: 'half', created_at: 1, copying: true }));
    await put('s-half/documents/a.txt', 'a');
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default']);
    await expect(read('s-half/documents/a.txt')).resolves.toBeNull();
  });

  it('deletes a stack and frees its room, never the last one', async () => {
    await put('default/documents/a.txt', 'a');
    await put('s-big/documents/big.bin', new Uint8Array(1_000_000));
    expect(await folders.remove('s-big', false)).toEqual({ freed: 1_000_000 });
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default']);
    await expect(folders.remove('default', false)).rejects.toMatchObject({ shape: { code: 'bad_request', message: expect.stringContaining('only stack') } });
    expect(await read('default/documents/a.txt')).toBe('a');
  });

  it('deletes the open stack once its worker let go of its files', async () => {
    await put('default/documents/a.txt', 'a');
    await put('s-open/.os/memory/memory.db', new Uint8Array(8192));
    // A worker holding a sync access handle, as the stack worker's database does.
    const source = `self.onmessage = async (e) => { let d = await navigator.storage.getDirectory(); for (const p of e.data.slice(0, -1)) d = await d.getDirectoryHandle(p); self.h = await (await d.getFileHandle(e.data.at(-1))).createSyncAccessHandle(); postMessage('held'); };`;
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
    worker.postMessage([area, 's-open', '.os', 'memory', 'memory.db']);
    await new Promise((held) => (worker.onmessage = held));
    // The size of a file held open is still read.
    expect(await folderSize(await (await stacksDir()).getDirectoryHandle('s-open'))).toBe(8192);
    const removing = folders.remove('s-open', true);
    setTimeout(() => worker.terminate(), 200);
    await expect(removing).resolves.toEqual({ freed: 8192 });
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default']);
  });

  it('copies nothing once its signal aborted (the stack was taken over by another tab)', async () => {
    await put('default/a.txt', 'a');
    const target = await (await stacksDir()).getDirectoryHandle('target', { create: true });
    const controller = new AbortController();
    controller.abort(new Error('taken over'));
    await expect(copyFolder(await (await stacksDir()).getDirectoryHandle('default'), target, controller.signal)).rejects.toThrow('taken over');
    expect(await folderSize(target)).toBe(0);
  });

  describe('checkpoints', () => {
    /** A still stack's checkpoint, taken as the stack worker takes one (its files as they lie). */
    async function checkpoint(stackId: string, label: string) {
      const dir = await (await stacksDir()).getDirectoryHandle(stackId);
      const store = await openCheckpointStore(dir);
      const newest = (await store.list())[0];
      const sources = await checkpointSources(dir, { databases: null, capture: null, ...(newest ? { previous: newest.files } : {}) });
      return store.take({ reason: 'manual', label, layout: `{"label":"${label}"}`, sources, ...checkpointKinds });
    }

    beforeEach(async () => {
      await put('default/.os/config/stack.json', JSON.stringify({ name: 'Work', created_at: 1 }));
      await put('default/.os/config/secrets.json', '{"api_key":"test-key-1"}');
      await put('default/documents/a.txt', 'the original');
      await put('default/.os/memory/transcript.db', new Uint8Array(4096).fill(1));
      await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: 'abc12345', state: 'g1', disk: 'g1' }));
      await put('default/.os/vm/state.bin', new Uint8Array(200_000).fill(5));
      await put('default/.os/vm/overlay.data', new Uint8Array(150_000).fill(6));
      await put('default/.os/vm/overlay.map', new Uint8Array(100).fill(7));
    });

    it('restores a still stack whole, keeping it as it was as a checkpoint first, its name and secrets untouched', async () => {
      const first = await checkpoint('default', 'first');
      await put('default/documents/a.txt', 'changed');
      await put('default/documents/new.txt', 'made after');
      await put('default/.os/memory/transcript.db', new Uint8Array(4096).fill(2));
      await put('default/.os/vm/overlay.data', new Uint8Array(150_000).fill(8));
      await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: 'abc12345', state: 'g1', disk: null }));
      await put('default/.os/config/secrets.json', '{"api_key":"test-key-2"}');
      // A stack from a file: restricted before, restricted after (checkpoints never hold the record).
      await put('default/.os/config/trust.json', '{"version":1,"origin":"stack_file"}');

      await expect(folders.restoreCheckpoint('default', first.id, { heldByCaller: false, layout: '{"now":1}' })).resolves.toEqual({ layout: '{"label":"first"}' });
      expect(await read('default/.os/config/trust.json')).toBe('{"version":1,"origin":"stack_file"}');
      expect(await read('default/documents/a.txt')).toBe('the original');
      expect(await read('default/documents/new.txt')).toBeNull();
      expect((await read('default/.os/memory/transcript.db'))!.charCodeAt(0)).toBe(1);
      expect((await read('default/.os/vm/overlay.data'))!.charCodeAt(0)).toBe(6);
      expect(JSON.parse((await read('default/.os/vm/machine.json'))!)).toMatchObject({ state: 'g1', disk: 'g1' });
      expect(await read('default/.os/config/secrets.json')).toBe('{"api_key":"test-key-2"}');
      expect(JSON.parse((await read('default/.os/config/stack.json'))!)).toEqual({ name: 'Work', created_at: 1 });

      // What the restore replaced is a checkpoint of its own: going back to it undoes the restore.
      const store = await openCheckpointStore(await (await stacksDir()).getDirectoryHandle('default'));
      const [before] = await store.list();
      expect(before).toMatchObject({ reason: 'before_restore', layout: '{"now":1}' });
      expect(before!.changes.changed).toEqual(['documents/a.txt']);
      expect(before!.changes.added).toEqual(['documents/new.txt']);
      // The disk moved on after its save: that state was not kept, so the computer would cold boot.
      expect(before!.files['.os/vm/state.bin']).toBeUndefined();
      await folders.restoreCheckpoint('default', before!.id, { heldByCaller: false, layout: null });
      expect(await read('default/documents/new.txt')).toBe('made after');
      expect(await read('default/.os/vm/state.bin')).toBeNull();
    });

    it('finishes at the next open a restore cut short after the stack was cleared, and only once', async () => {
      const first = await checkpoint('default', 'first');
      await put('default/documents/new.txt', 'made after');
      // As a tab killed part-way leaves it: the record names the checkpoint, the files were
      // removed, and the first of the checkpoint's was being written.
      await put('default/.os/config/stack.json', JSON.stringify({ name: 'Work', created_at: 1, restoring: first.id }));
      const stack = await (await stacksDir()).getDirectoryHandle('default');
      for (const name of ['documents', '.os/memory', '.os/vm']) {
        const [parent, child] = name.includes('/') ? [await stack.getDirectoryHandle('.os'), name.split('/')[1]!] : [stack, name];
        await parent.removeEntry(child, { recursive: true });
      }
      await put('default/documents/a.txt', 'the orig');

      await expect(finishRestore(stack, { releaseWaitMs: 3_000 })).resolves.toBe(first.id);
      expect(await read('default/documents/a.txt')).toBe('the original');
      expect(await read('default/documents/new.txt')).toBeNull();
      expect((await read('default/.os/memory/transcript.db'))!.charCodeAt(0)).toBe(1);
      expect((await read('default/.os/vm/state.bin'))!.length).toBe(200_000);
      expect(JSON.parse((await read('default/.os/vm/machine.json'))!)).toMatchObject({ state: 'g1', disk: 'g1' });
      expect(await read('default/.os/config/secrets.json')).toBe('{"api_key":"test-key-1"}');
      expect(JSON.parse((await read('default/.os/config/stack.json'))!)).toEqual({ name: 'Work', created_at: 1 });
      // Done: the next open leaves the stack alone.
      await put('default/documents/later.txt', 'after the restore');
      await expect(finishRestore(stack)).resolves.toBeNull();
      expect(await read('default/documents/later.txt')).toBe('after the restore');
    });

    it('finishes a restore cut short before it restores or copies the stack', async () => {
      const first = await checkpoint('default', 'first');
      await put('default/.os/config/stack.json', JSON.stringify({ name: 'Work', created_at: 1, restoring: first.id }));
      await (await (await stacksDir()).getDirectoryHandle('default')).removeEntry('documents', { recursive: true });
      await folders.duplicate('default', 'Copy', false);
      expect(await read('s-copy1/documents/a.txt')).toBe('the original');
      expect(JSON.parse((await read('default/.os/config/stack.json'))!)).toEqual({ name: 'Work', created_at: 1 });
    });

    it('will not restore a stack open in another tab, nor a checkpoint that is gone', async () => {
      const first = await checkpoint('default', 'first');
      await holdElsewhere('default');
      await expect(folders.restoreCheckpoint('default', first.id, { heldByCaller: false, layout: null })).rejects.toMatchObject({ shape: { code: 'busy' } });
      await expect(folders.restoreCheckpoint('default', 'c-0-000000', { heldByCaller: true, layout: null })).rejects.toMatchObject({ shape: { code: 'not_found' } });
      expect(await read('default/documents/a.txt')).toBe('the original');
    });

    it('opens a checkpoint as a new stack, leaving the stack itself as it is (even while open elsewhere)', async () => {
      const first = await checkpoint('default', 'first');
      await put('default/documents/a.txt', 'changed');
      await holdElsewhere('default');
      const made = await folders.stackFromCheckpoint('default', first.id, 'Work, before');
      expect(made).toMatchObject({ stack: { id: 's-copy1', name: 'Work, before' }, layout: '{"label":"first"}' });
      expect(await read('s-copy1/documents/a.txt')).toBe('the original');
      expect(await read('s-copy1/.os/vm/overlay.data')).not.toBeNull();
      expect(await read('s-copy1/.os/config/secrets.json')).toBeNull();
      const made1 = await (await stacksDir()).getDirectoryHandle('s-copy1');
      await expect((await made1.getDirectoryHandle('.os')).getDirectoryHandle('checkpoints')).rejects.toThrow(); // it starts its own
      expect(await read('default/documents/a.txt')).toBe('changed');
      // Duplicates do not carry checkpoints either.
      releases.splice(0).forEach((release) => release());
      await folders.duplicate('default', 'Copy', false);
      const copy = await (await stacksDir()).getDirectoryHandle('s-copy2');
      await expect((await copy.getDirectoryHandle('.os')).getDirectoryHandle('checkpoints')).rejects.toThrow();
    });
  });
});
