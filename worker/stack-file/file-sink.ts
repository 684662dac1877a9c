// Where an imported entry's bytes go: a file in OPFS, written as they are unpacked. In a worker,
// through a sync access handle, straight from the bytes given; elsewhere (the page has no sync
// handles: the browser tests run the importer there) through a writable stream. A writable copies
// each write into the renderer's memory, where the copy stays until a garbage collection: an
// import of 1 GiB kept the renderer 70-180 MB larger than before it, in a sawtooth (measured).
import { concatBytes } from '../../vm/bytes.ts';

/** Bytes gathered before one write: unpacked pieces are a few KiB (deflate) to 1 MiB (zstd). */
const BATCH_BYTES = 1 << 20;
/** The longest a sync sink holds its thread before letting the worker's other work in (a cancel). */
const HOLD_MS = 50;

export interface FileSink {
  /** Writes `chunk`, or a copy of it: the caller may reuse or free it once this settles. A failed write rejects here or at a later call. */
  write(chunk: Uint8Array): Promise<void>;
  /** Makes the file whole: everything written is in it. */
  close(): Promise<void>;
  /** Lets go of the file; what it holds then is the caller's to remove. Must not throw. */
  abort(): Promise<void>;
}

/** What a sink uses of a FileSystemSyncAccessHandle. */
interface SyncHandle {
  write(bytes: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  flush(): void;
  close(): void;
}

type SyncableFile = FileSystemFileHandle & { createSyncAccessHandle?(): Promise<SyncHandle> };

/** A sink writing `file` from its start. */
export async function openFileSink(file: FileSystemFileHandle): Promise<FileSink> {
  const syncable = file as SyncableFile;
  if (syncable.createSyncAccessHandle) return syncSink(await syncable.createSyncAccessHandle());
  return writableSink(await file.createWritable());
}

/**
 * Writes each chunk where it belongs as it comes, small ones gathered in one buffer of its own
 * first: nothing is allocated per write, so what an import holds does not grow with its size.
 */
function syncSink(handle: SyncHandle): FileSink {
  let at = 0;
  let batch: Uint8Array | null = null;
  let batched = 0;
  let since = performance.now();
  let closed = false;
  const put = (bytes: Uint8Array) => {
    const written = handle.write(bytes, { at });
    if (written !== bytes.byteLength) throw new DOMException(`only ${at + written} bytes of the file were written`, 'QuotaExceededError');
    at += written;
  };
  const flushBatch = () => {
    if (!batched) return;
    put(batch!.subarray(0, batched));
    batched = 0;
  };
  return {
    async write(chunk) {
      if (chunk.byteLength >= BATCH_BYTES) {
        flushBatch();
        put(chunk);
      } else {
        batch ??= new Uint8Array(BATCH_BYTES);
        if (batched + chunk.byteLength > BATCH_BYTES) flushBatch();
        batch.set(chunk, batched);
        batched += chunk.byteLength;
      }
      if (performance.now() - since >= HOLD_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        since = performance.now();
      }
    },
    async close() {
      flushBatch();
      handle.truncate(at); // a file that was there is replaced, as a writable replaces it
      handle.flush();
      closed = true;
      handle.close();
    },
    async abort() {
      if (closed) return;
      closed = true;
      try {
        handle.close();
      } catch {
        // already let go
      }
    },
  };
}

/**
 * Gathers a batch, hands it to the file and returns once the one before it is written: unpacking
 * and hashing go on while the browser writes, and a write's failure (a full disk) surfaces at the
 * next batch or at close().
 */
function writableSink(writable: FileSystemWritableFileStream): FileSink {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let writing: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (!pendingBytes) return;
    const joined = concatBytes(...pending);
    pending = [];
    pendingBytes = 0;
    await writing;
    writing = writable.write(joined);
    writing.catch(() => {}); // awaited at the next flush or at close()
  };
  return {
    async write(chunk) {
      pending.push(chunk.slice());
      pendingBytes += chunk.byteLength;
      if (pendingBytes >= BATCH_BYTES) await flush();
    },
    async close() {
      await flush();
      await writing;
      await writable.close();
    },
    async abort() {
      await writing.catch(() => {});
      await writable.abort().catch(() => {});
    },
  };
}
