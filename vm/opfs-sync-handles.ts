// The sync access handles of the files the 9p server uses, by path: opened when first used (waiting
// a moment while another worker holds the file) and closed once the file has been idle 300 ms, so
// the stack worker can move a new file over it.
import { named } from './opfs-folder-handles.ts';
import { ENOSPC, FsError } from './workspace-fs.ts';

/** A handle unused this long is closed (ms). */
const IDLE_CLOSE_MS = 300;
/** How long an open waits for another worker (the stack worker's move) to let the file go. */
const HELD_WAIT_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Open {
  handle: FileSystemSyncAccessHandle;
  timer: ReturnType<typeof setTimeout> | null;
  /** When it was last written (a sync handle's writes do not show in getFile() until it closes). */
  writtenAt: number | null;
}

export interface SyncHandles {
  /** The files open now. */
  readonly open: Map<string, Open>;
  /** Puts off the idle close of an open file. */
  scheduleClose(path: string, o: Open): void;
  /** Flushes and closes the file when it is open. */
  close(path: string): void;
  /** The file's handle, opened when it is not yet. */
  handleOf(path: string): Promise<Open>;
}

export function syncHandles(fileHandle: (path: string) => Promise<FileSystemFileHandle>): SyncHandles {
  const open = new Map<string, Open>();
  const opening = new Map<string, Promise<Open>>();

  function scheduleClose(path: string, o: Open) {
    if (o.timer) clearTimeout(o.timer);
    o.timer = setTimeout(() => close(path), IDLE_CLOSE_MS);
  }

  function close(path: string) {
    const o = open.get(path);
    if (!o) return;
    open.delete(path);
    if (o.timer) clearTimeout(o.timer);
    try {
      o.handle.flush();
    } finally {
      o.handle.close();
    }
  }

  async function handleOf(path: string): Promise<Open> {
    const existing = open.get(path);
    if (existing) {
      scheduleClose(path, existing);
      return existing;
    }
    let pending = opening.get(path);
    if (!pending) {
      pending = (async () => {
        const file = await fileHandle(path);
        const began = Date.now();
        for (;;) {
          try {
            const o: Open = { handle: await file.createSyncAccessHandle(), timer: null, writtenAt: null };
            open.set(path, o);
            return o;
          } catch (error) {
            // Another worker has it for a moment (the stack worker replacing it).
            if (!named(error, 'NoModificationAllowedError') || Date.now() - began > HELD_WAIT_MS) throw error;
            await sleep(20);
          }
        }
      })().finally(() => opening.delete(path));
      opening.set(path, pending);
    }
    const o = await pending;
    scheduleClose(path, o);
    return o;
  }

  return { open, scheduleClose, close, handleOf };
}

/** Reads into `into` from `offset` until it is full or the file ends; the bytes read. */
export function readAt(handle: FileSystemSyncAccessHandle, offset: number, into: Uint8Array): number {
  const wanted = Math.max(0, Math.min(into.byteLength, handle.getSize() - offset));
  let done = 0;
  while (done < wanted) {
    const n = handle.read(into.subarray(done, wanted), { at: offset + done });
    if (n <= 0) break;
    done += n;
  }
  return done;
}

export function writeAt(handle: FileSystemSyncAccessHandle, offset: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.byteLength) {
    const n = handle.write(bytes.subarray(done), { at: offset + done });
    if (n <= 0) throw new FsError(ENOSPC, "the browser's storage is full");
    done += n;
  }
}
