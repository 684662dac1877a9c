// Writing a file so that a reader, or a tab killed mid-write, never meets half of it. Two ways,
// each where it fits:
// - `replaceFile`: through `createWritable`, which writes to a swap file (`<name>.crswap` in
//   Chromium) and swaps it in whole on close; for the small files (JSON records, marks).
// - `writeWholeFile`: to a hidden partial file first, its whole size reserved, then moved over the
//   name; for the user's files, which the computer's /workspace serves and listings show, and
//   which may be large: a file that does not fit is refused before it takes any room, and a full
//   disk is reported as one whatever the browser raised.
import { isQuotaError } from './quota.ts';
import { entriesOf } from './opfs.ts';

/**
 * Replaces `dir/name` with `data` whole (creating it): readers see the old content or the new,
 * never a mix. A failed write is aborted, leaving the old file as it was.
 */
export async function replaceFile(dir: FileSystemDirectoryHandle, name: string, data: string | BufferSource | Blob = ''): Promise<void> {
  await replaceFileWith(dir, name, (writable) => writable.write(data));
}

/**
 * Replaces `dir/name` (creating it) with what `fill` writes, in as many writes as it likes: swapped
 * in whole once `fill` resolves; when it throws, the write is aborted and the old file stays.
 */
export async function replaceFileWith(dir: FileSystemDirectoryHandle, name: string, fill: (writable: FileSystemWritableFileStream) => Promise<void>): Promise<void> {
  const writable = await (await dir.getFileHandle(name, { create: true })).createWritable({ keepExistingData: false });
  try {
    await fill(writable);
    await writable.close();
  } catch (error) {
    await writable.abort().catch(() => {});
    throw error;
  }
}

/**
 * Streams `file` into `dir/name` (creating it), swapped in whole when the stream ends; a failed or
 * aborted copy is aborted, leaving the old file as it was.
 */
export async function copyFileInto(file: Blob, dir: FileSystemDirectoryHandle, name: string, signal?: AbortSignal): Promise<void> {
  const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
  try {
    // pipeTo closes the writable when the file is read through, which commits it.
    await file.stream().pipeTo(writable, signal ? { signal } : {});
  } catch (error) {
    await writable.abort().catch(() => {});
    throw error;
  }
}

/** Names of files still being written (hidden, never listed, exported or shown in /workspace). */
export const PARTIAL_PREFIX = '.stackdocs-partial-';

/** Whether an OPFS entry is a write in progress, or one a killed tab left behind. */
export function isPartialWrite(name: string): boolean {
  return name.startsWith(PARTIAL_PREFIX);
}

/**
 * Writes `bytes` as `dir/name` so that readers only ever see the old file or the whole new one:
 * the bytes go to a hidden partial file first, which is then moved over `name` (a move within one
 * folder replaces the file in one step). A failed or killed write leaves at most a partial file,
 * which listings skip and `sweepPartialWrites` removes. The file's whole size is reserved before
 * any byte is written. Throws a QuotaExceededError DOMException
 * when the origin's storage is full, whatever error the browser raised for it (a write through a
 * data pipe can fail as "Failed to write data to data pipe" before the quota refusal arrives).
 */
export async function writeWholeFile(dir: FileSystemDirectoryHandle, name: string, bytes: Uint8Array): Promise<FileSystemFileHandle> {
  const partialName = `${PARTIAL_PREFIX}${crypto.randomUUID()}`;
  try {
    const partial = await dir.getFileHandle(partialName, { create: true });
    await writeBytes(partial, bytes);
    await moveOver(partial, dir, name);
  } catch (error) {
    await dir.removeEntry(partialName).catch(() => {});
    if (isQuotaError(error) || !(await isFull(dir, bytes.byteLength))) throw error;
    throw new DOMException(`${(error as Error)?.message ?? 'The write failed'}: the browser's storage is full`, 'QuotaExceededError');
  }
  return dir.getFileHandle(name);
}

/** How long a change waits for the computer to let go of a file (its /workspace share has it open). */
const HELD_WAIT_MS = 3000;

/**
 * Runs `change` (a move onto a file, its removal), again while another worker holds the file
 * (NoModificationAllowedError): the computer's /workspace share (vm/workspace-9p.ts) closes what it
 * has not used for 300 ms. Gives up with the browser's error after 3 s.
 */
export async function whenLetGo<T>(change: () => Promise<T>): Promise<T> {
  const began = Date.now();
  for (;;) {
    try {
      return await change();
    } catch (error) {
      const held = error instanceof DOMException && error.name === 'NoModificationAllowedError';
      if (!held || Date.now() - began > HELD_WAIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** Renames `file` to `name`, replacing a file there (Chromium's move does; others may refuse). */
async function moveOver(file: FileSystemFileHandle, dir: FileSystemDirectoryHandle, name: string): Promise<void> {
  const move = (file as FileSystemFileHandle & { move(name: string): Promise<void> }).move.bind(file);
  await whenLetGo(async () => {
    try {
      await move(name);
    } catch (error) {
      if (!(error instanceof DOMException) || !['InvalidModificationError', 'NoModificationAllowedError'].includes(error.name)) throw error;
      await dir.removeEntry(name);
      await move(name);
    }
  });
}

/** Removes partial files a killed tab left in `dir` (not its subfolders) over `minAgeMs` ago. */
export async function sweepPartialWrites(dir: FileSystemDirectoryHandle, minAgeMs = 10 * 60_000, now = Date.now()): Promise<number> {
  let removed = 0;
  for await (const [name, handle] of entriesOf(dir)) {
    if (handle.kind !== 'file' || !isPartialWrite(name)) continue;
    const file = await (handle as FileSystemFileHandle).getFile().catch(() => null);
    if (file && now - file.lastModified < minAgeMs) continue; // another writer's, still going
    await dir.removeEntry(name).then(() => removed++, () => {});
  }
  return removed;
}

/**
 * Writes `bytes` as the whole of a new file, its room reserved first, all at once: a file that
 * does not fit is refused before it takes any, so it never fills the last of the storage under
 * the stack's own small writes (the chat). In a worker, through a sync access handle, straight from
 * `bytes`: a writable stream copies what it is given into the page's memory, where the copy stays
 * until a garbage collection (100 MB written kept the renderer 100 MB larger, measured; a saved
 * state is 50-150 MB). Elsewhere (the page itself has no sync handles), through a writable.
 */
export async function writeBytes(file: FileSystemFileHandle, bytes: Uint8Array): Promise<void> {
  const syncable = file as FileSystemFileHandle & { createSyncAccessHandle?(): Promise<SyncHandle> };
  if (syncable.createSyncAccessHandle) {
    const handle = await syncable.createSyncAccessHandle();
    try {
      handle.truncate(bytes.byteLength);
      // A slice at a time, the worker's other work let in between: a sync write holds its thread,
      // and a saved state written on a slow disk took 13 s (the VM worker's emulator runs on).
      for (let at = 0; at < bytes.byteLength; at += WRITE_SLICE) {
        const slice = bytes.subarray(at, at + WRITE_SLICE);
        const written = handle.write(slice, { at });
        if (written !== slice.byteLength) throw new Error(`only ${at + written} of ${bytes.byteLength} bytes were written`);
        if (at + WRITE_SLICE < bytes.byteLength) await new Promise((resolve) => setTimeout(resolve, 0));
      }
      handle.flush();
    } finally {
      handle.close();
    }
    return;
  }
  const writable = await file.createWritable();
  try {
    await writable.truncate(bytes.byteLength);
    await writable.write({ type: 'write', position: 0, data: bytes as Uint8Array<ArrayBuffer> });
    await writable.close();
  } catch (error) {
    await writable.abort().catch(() => {});
    throw error;
  }
}

/** Bytes writeBytes writes through a sync handle before letting its thread's other work in. */
const WRITE_SLICE = 2 * 2 ** 20;

/** What writeBytes uses of a FileSystemSyncAccessHandle. */
interface SyncHandle {
  truncate(size: number): void;
  write(bytes: Uint8Array, options: { at: number }): number;
  flush(): void;
  close(): void;
}

/** Whether `size` more bytes would be refused for quota: tried with a scratch file, then removed. */
async function isFull(dir: FileSystemDirectoryHandle, size: number): Promise<boolean> {
  const name = `${PARTIAL_PREFIX}probe-${crypto.randomUUID()}`;
  try {
    const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
    try {
      await writable.truncate(Math.max(size, 1));
      await writable.close();
      return false;
    } catch (error) {
      await writable.abort().catch(() => {});
      return isQuotaError(error);
    }
  } catch (error) {
    return isQuotaError(error);
  } finally {
    await dir.removeEntry(name).catch(() => {});
  }
}
