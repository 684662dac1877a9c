// /workspace's files in real OPFS, as the 9p server in the VM worker sees them: sync access
// handles in a dedicated worker, the stack worker replacing a file the computer has open, moves
// of files and folders, and errors as the guest's errnos.
import * as Comlink from 'comlink';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whenLetGo, writeWholeFile } from '../storage/atomic-write.ts';
import type { OpfsWorkspaceFsWorker } from './testing/opfs-workspace-fs.worker.ts';
import { EEXIST, EISDIR, ENOENT, ENOTEMPTY, type WorkspaceFs } from './workspace-fs.ts';

const folder = `workspace-fs-${crypto.randomUUID()}`;
let worker: Worker;
let remote: Comlink.Remote<OpfsWorkspaceFsWorker>;
let dir: FileSystemDirectoryHandle;

type Method = Exclude<keyof WorkspaceFs, 'readNow' | 'writeNow'>;

async function call<M extends Method>(method: M, ...args: Parameters<WorkspaceFs[M]>): Promise<Awaited<ReturnType<WorkspaceFs[M]>>> {
  const answer = await remote.call(method, ...args);
  if (answer.errno !== undefined) throw Object.assign(new Error(answer.message), { errno: answer.errno });
  return answer.value as Awaited<ReturnType<WorkspaceFs[M]>>;
}
const errnoOf = (promise: Promise<unknown>) => promise.then(
  () => null,
  (error: { errno?: number }) => error.errno ?? -1,
);
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

beforeAll(async () => {
  worker = new Worker(new URL('./testing/opfs-workspace-fs.worker.ts', import.meta.url), { type: 'module' });
  remote = Comlink.wrap<OpfsWorkspaceFsWorker>(worker);
  await remote.open(folder);
  dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(folder);
});
afterAll(async () => {
  worker.terminate();
  // A terminated worker lets go of its sync access handles a moment later.
  const root = await navigator.storage.getDirectory();
  await whenLetGo(() => root.removeEntry(folder, { recursive: true }));
});

describe('opfsWorkspaceFs', () => {
  it('writes through a sync handle what a reader of the folder then sees', async () => {
    await call('createFile', 'a.txt');
    await call('write', 'a.txt', 0, bytes('hello world'));
    await call('truncate', 'a.txt', 5);
    expect(text(await call('read', 'a.txt', 1, 100))).toBe('ello');
    expect(await call('stat', 'a.txt')).toMatchObject({ kind: 'file', size: 5 });
    await new Promise((resolve) => setTimeout(resolve, 400)); // idle: the handle is closed
    expect(await (await (await dir.getFileHandle('a.txt')).getFile()).text()).toBe('hello');
    expect(await errnoOf(call('createFile', 'a.txt'))).toBe(EEXIST);
  });

  it("lets the stack worker replace a file it has open, and reads the new bytes", async () => {
    await call('createFile', 'upload.csv');
    await call('write', 'upload.csv', 0, bytes('old'));
    // Read by the stack worker (a document, a checkpoint) while the share has it open.
    expect(await (await (await dir.getFileHandle('upload.csv')).getFile()).text()).toBe('old');
    // The share has it open this moment; the stack worker's move waits for it to be let go.
    await writeWholeFile(dir, 'upload.csv', bytes('new,bytes'));
    await call('release', 'upload.csv');
    expect(text(await call('read', 'upload.csv', 0, 100))).toBe('new,bytes');
    // And removed by it (a document deleted) while the share has it open.
    await call('write', 'upload.csv', 0, bytes('held'));
    await whenLetGo(() => dir.removeEntry('upload.csv'));
    expect(await call('stat', 'upload.csv')).toBe(null);
  });

  it('moves files and folders, and refuses what POSIX refuses', async () => {
    await call('mkdir', 'src');
    await call('mkdir', 'src/inner');
    await call('createFile', 'src/inner/f.txt');
    await call('write', 'src/inner/f.txt', 0, bytes('moved'));
    await call('rename', 'src', 'dst');
    expect(await call('stat', 'src')).toBe(null);
    expect(text(await call('read', 'dst/inner/f.txt', 0, 10))).toBe('moved');
    await call('mkdir', 'full');
    await call('createFile', 'full/x');
    expect(await errnoOf(call('rename', 'dst', 'full'))).toBe(ENOTEMPTY);
    expect(await errnoOf(call('rename', 'dst/inner/f.txt', 'full'))).toBe(EISDIR);
    expect(await errnoOf(call('remove', 'full'))).toBe(ENOTEMPTY);
    await call('remove', 'full/x');
    await call('remove', 'full');
    expect(await dir.getDirectoryHandle('full').then(() => 'there', () => 'gone')).toBe('gone');
    await call('rename', 'dst/inner/f.txt', 'a.txt'); // replaces a file
    expect(text(await call('read', 'a.txt', 0, 10))).toBe('moved');
    expect(await errnoOf(call('read', 'nothing.txt', 0, 1))).toBe(ENOENT);
  });

  it('lists without the system space and partial writes, and sees a folder made again by the stack worker', async () => {
    await dir.getDirectoryHandle('.os', { create: true });
    await dir.getFileHandle('.stackdocs-partial-x', { create: true });
    const names = (await call('list', '')).map((e) => e.name);
    expect(names).not.toContain('.os');
    expect(names).not.toContain('.stackdocs-partial-x');
    await call('mkdir', 'again');
    expect(await call('list', 'again')).toEqual([]);
    await dir.removeEntry('again');
    await (await dir.getDirectoryHandle('again', { create: true })).getFileHandle('new.txt', { create: true });
    expect(await call('stat', 'again/new.txt')).toMatchObject({ kind: 'file', size: 0 });
  });

  it('keeps permission bits in the system space', async () => {
    await call('writeModes', { 'run.sh': 0o755 });
    expect(await call('readModes')).toEqual({ 'run.sh': 0o755 });
  });

  it('reads permission bits from a stack file only as numbers, and none from a file far too large', async () => {
    const os = await dir.getDirectoryHandle('.os', { create: true });
    const put = async (text: string) => {
      const writable = await (await os.getFileHandle('workspace-modes.json', { create: true })).createWritable();
      await writable.write(text);
      await writable.close();
    };
    await put(JSON.stringify({ 'run.sh': 0o755, 'odd.sh': 'rwx', 'list.sh': [1] }));
    expect(await call('readModes')).toEqual({ 'run.sh': 0o755 });
    await put(`{"run.sh": 493, "pad": "${'x'.repeat(5 * 1024 * 1024)}"}`);
    expect(await call('readModes')).toEqual({});
  });
});
