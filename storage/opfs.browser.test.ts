// The storage layer on real OPFS in Chromium: JSON files that survive a new handle, corrupt files
// set aside, whole-file writes that leave no partial file, paths to folders and files, walks.
import { afterEach, describe, expect, it } from 'vitest';
import { isPartialWrite, replaceFile, writeWholeFile } from './atomic-write.ts';
import { openOpfsStorage, readJsonAt, writeJsonAt } from './json-files.ts';
import { childrenOf, directoryAt, fileAt, openStackDirectory } from './opfs.ts';
import { copyFolder, folderSize, listFiles } from './walk.ts';

const stackId = `test-${crypto.randomUUID()}`;

async function stackDir() {
  const root = await navigator.storage.getDirectory();
  return (await (await (await root.getDirectoryHandle('stacks')).getDirectoryHandle(stackId)).getDirectoryHandle('.os')).getDirectoryHandle('config');
}

afterEach(async () => {
  const root = await navigator.storage.getDirectory();
  await (await root.getDirectoryHandle('stacks')).removeEntry(stackId, { recursive: true }).catch(() => {});
});

describe('openOpfsStorage', () => {
  it('writes JSON that a fresh handle reads back', async () => {
    await (await openOpfsStorage(stackId)).writeJson('settings.json', { model: 'm', n: 1 });
    expect(await (await openOpfsStorage(stackId)).readJson('settings.json')).toEqual({ model: 'm', n: 1 });
  });

  it('returns undefined for a file that does not exist', async () => {
    expect(await (await openOpfsStorage(stackId)).readJson('absent.json')).toBeUndefined();
  });

  it('sets a corrupt file aside instead of losing it', async () => {
    const storage = await openOpfsStorage(stackId);
    await storage.writeJson('canvas.json', { ok: true });
    const dir = await stackDir();
    const writable = await (await dir.getFileHandle('canvas.json')).createWritable();
    await writable.write('{"windows": [tru');
    await writable.close();

    expect(await storage.readJson('canvas.json')).toBeUndefined();
    const names: string[] = [];
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    const aside = names.find((name) => name.startsWith('canvas.json.corrupt-'));
    expect(aside).toBeTruthy();
    expect(await (await (await dir.getFileHandle(aside!)).getFile()).text()).toBe('{"windows": [tru');
    expect(names).not.toContain('canvas.json');
  });
});

describe('files and folders by path', () => {
  it('finds a file at a path, and null where any part is absent', async () => {
    const stack = await openStackDirectory(stackId);
    await writeJsonAt(stack, '.os/vm/machine.json', { state: 'g1' });
    expect(await readJsonAt(stack, '.os/vm/machine.json')).toEqual({ state: 'g1' });
    expect(await (await fileAt(stack, '.os/vm/machine.json'))?.text()).toBe('{"state":"g1"}');
    expect(await fileAt(stack, '.os/vm/absent.json')).toBeNull();
    expect(await fileAt(stack, 'nowhere/x.json')).toBeNull();
    expect(await directoryAt(stack, 'nowhere/deeper')).toBeNull();
    expect((await directoryAt(stack, 'made/here', { create: true }))?.name).toBe('here');
    await replaceFile((await directoryAt(stack, '.os/vm'))!, 'bad.json', '{not json');
    expect(await readJsonAt(stack, '.os/vm/bad.json')).toBeNull();
  });

  it('writes a whole file through a partial file that does not stay', async () => {
    const stack = await openStackDirectory(stackId);
    await writeWholeFile(stack, 'a.bin', new Uint8Array([1, 2, 3]));
    await writeWholeFile(stack, 'a.bin', new Uint8Array([4, 5]));
    expect([...new Uint8Array(await (await fileAt(stack, 'a.bin'))!.arrayBuffer())]).toEqual([4, 5]);
    expect((await childrenOf(stack)).map(([name]) => name).filter(isPartialWrite)).toEqual([]);
  });

  it('lists, sizes and copies a tree', async () => {
    const stack = await openStackDirectory(stackId);
    await writeJsonAt(stack, 'b/2.json', [2]);
    await writeJsonAt(stack, 'a/1.json', [1]);
    await writeJsonAt(stack, 'a/skip/3.json', [3]);
    const paths = (await listFiles(stack, { sorted: true, skip: (path) => path === 'a/skip' })).map((found) => found.path);
    expect(paths).toEqual(['a/1.json', 'b/2.json']);
    expect(await folderSize(stack)).toBe(9);
    const copy = (await directoryAt(stack, 'copy', { create: true }))!;
    await copyFolder((await directoryAt(stack, 'a'))!, copy, new AbortController().signal, 'skip');
    expect((await listFiles(copy)).map((found) => found.path)).toEqual(['1.json']);
  });
});
