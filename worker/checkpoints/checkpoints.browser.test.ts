// Checkpoints of a stack folder in real Chromium OPFS, as the stack takes them: the stack may
// change once a checkpoint says it holds what it keeps (`held`), before it is stored, and the
// checkpoint still restores the stack as it was at that moment.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StackEventBody } from '../../protocol/events.ts';
import { CheckpointDropped, createCheckpoints, fixedSources, openCheckpointStore } from './checkpoints.ts';
import { checkpointSources } from './sources.ts';

let area = '';
let stack: FileSystemDirectoryHandle;

beforeEach(async () => {
  area = `checkpoints-hold-${crypto.randomUUID().slice(0, 8)}`;
  stack = await (await navigator.storage.getDirectory()).getDirectoryHandle(area, { create: true });
});

afterEach(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

async function write(dir: FileSystemDirectoryHandle, path: string, content: string | Uint8Array): Promise<void> {
  const parts = path.split('/');
  let folder = dir;
  for (const part of parts.slice(0, -1)) folder = await folder.getDirectoryHandle(part, { create: true });
  const writable = await (await folder.getFileHandle(parts.at(-1)!, { create: true })).createWritable();
  await writable.write(content as FileSystemWriteChunkType);
  await writable.close();
}

async function read(dir: FileSystemDirectoryHandle, path: string): Promise<string | null> {
  const parts = path.split('/');
  try {
    let folder = dir;
    for (const part of parts.slice(0, -1)) folder = await folder.getDirectoryHandle(part);
    return await (await (await folder.getFileHandle(parts.at(-1)!)).getFile()).text();
  } catch {
    return null;
  }
}

async function remove(dir: FileSystemDirectoryHandle, path: string): Promise<void> {
  const parts = path.split('/');
  let folder = dir;
  for (const part of parts.slice(0, -1)) folder = await folder.getDirectoryHandle(part);
  await folder.removeEntry(parts.at(-1)!);
}

function checkpointsOf(events: StackEventBody[] = []) {
  return createCheckpoints({
    stackDir: async () => stack,
    // Stands in for VACUUM INTO: a copy of each database in memory.
    copyDatabases: async () => ({ transcript: new TextEncoder().encode('transcript as copied'), memory: new TextEncoder().encode('memory as copied') }),
    computer: undefined,
    emit: (event) => events.push(event),
  });
}

describe('checkpoints holding the stack', () => {
  it('reads the files changed since the last checkpoint into memory, and only those', async () => {
    await write(stack, 'workspace/same.txt', 'unchanged');
    await write(stack, 'workspace/notes.txt', 'first');
    const kept = await openCheckpointStore(stack);
    const first = await kept.take({
      reason: 'manual',
      label: 'first',
      layout: null,
      sources: await checkpointSources(stack, { databases: null, capture: null }),
      isUserFile: (path) => !path.startsWith('.os/'),
      isComputer: () => false,
      isDatabase: () => false,
    });
    await write(stack, 'workspace/notes.txt', 'second, longer');
    await write(stack, 'workspace/new.txt', 'new');
    const listed = await checkpointSources(stack, { databases: null, capture: null, previous: first.files });
    const fixed = (await fixedSources(listed, first.files))!;
    // The stack moves on: the fixed sources still give what was there when they were fixed.
    await write(stack, 'workspace/notes.txt', 'third');
    await remove(stack, 'workspace/new.txt');
    const text = async (path: string) => {
      const found = fixed.find((source) => source.path === path)!;
      return new TextDecoder().decode(await found.read(0, found.size));
    };
    expect(await text('workspace/notes.txt')).toBe('second, longer');
    expect(await text('workspace/new.txt')).toBe('new');
    // An unchanged file is not read (the last checkpoint holds it): its source is the listed one.
    expect(fixed.find((source) => source.path === 'workspace/same.txt')).toBe(listed.find((source) => source.path === 'workspace/same.txt'));
  });

  it('lets the stack change once held, and restores it as it was then', async () => {
    await write(stack, 'workspace/notes.txt', 'before the mission');
    await write(stack, 'workspace/keep.txt', 'kept');
    await write(stack, 'workspace/big.bin', crypto.getRandomValues(new Uint8Array(60_000)));
    const events: StackEventBody[] = [];
    const checkpoints = checkpointsOf(events);
    await checkpoints.take('manual', 'first');
    await write(stack, 'workspace/notes.txt', 'the user edited this');

    let heldFirst = false;
    let storedFirst = false;
    const changes: Promise<void>[] = [];
    const taken = checkpoints
      .take('mission', 'tidy up', undefined, () => {
        heldFirst = !storedFirst;
        // What a mission does as soon as it may: every kind of change, while the checkpoint is stored.
        changes.push(
          (async () => {
            await write(stack, 'workspace/notes.txt', 'the mission overwrote this');
            await remove(stack, 'workspace/keep.txt');
            await write(stack, 'workspace/made.txt', 'made by the mission');
          })(),
        );
        return true;
      })
      .then((info) => ((storedFirst = true), info));
    const info = await taken;
    await Promise.all(changes);
    expect(heldFirst).toBe(true);
    expect(events.filter((event) => event.type === 'checkpoint_taken')).toHaveLength(2);

    const into = await stack.getDirectoryHandle('restored', { create: true });
    await (await openCheckpointStore(stack)).restoreInto(info.id, into);
    expect(await read(into, 'workspace/notes.txt')).toBe('the user edited this');
    expect(await read(into, 'workspace/keep.txt')).toBe('kept');
    expect(await read(into, 'workspace/made.txt')).toBeNull();
    expect(await read(into, '.os/memory/transcript.db')).toBe('transcript as copied');
    // The databases' copies were made in memory: no folder holds them.
    await expect((await stack.getDirectoryHandle('.os')).getDirectoryHandle('snapshot')).rejects.toMatchObject({ name: 'NotFoundError' });
  });

  it('keeps no checkpoint whose mission went on before it held the stack', async () => {
    await write(stack, 'workspace/notes.txt', 'before the mission');
    const events: StackEventBody[] = [];
    const checkpoints = checkpointsOf(events);
    const first = await checkpoints.take('manual', 'first');
    await write(stack, 'workspace/notes.txt', 'the user edited this');

    const slow = checkpoints.take('mission', 'tidy up', undefined, () => false);
    expect(checkpoints.doing()).not.toBeNull();
    await expect(slow).rejects.toBeInstanceOf(CheckpointDropped);
    expect(checkpoints.doing()).toBeNull();
    // Only the first is listed and told; the dropped one left no record behind.
    expect((await checkpoints.list()).checkpoints.map((checkpoint) => checkpoint.id)).toEqual([first.id]);
    expect(events.filter((event) => event.type === 'checkpoint_taken')).toHaveLength(1);
    // The next one is taken as usual.
    const next = await checkpoints.take('manual', 'after', undefined, () => true);
    expect((await checkpoints.list()).checkpoints.map((checkpoint) => checkpoint.id)).toEqual([next.id, first.id]);
  });
});
