// The machine's hard disk as v86 wants it (its async-buffer interface), over a synchronous file:
// every guest write reaches the file at once and the disk stays out of save_state.

/** Synchronous positional file IO: what OPFS's FileSystemSyncAccessHandle offers in a worker. */
export interface SyncFile {
  read(buffer: Uint8Array, at: number): number;
  write(buffer: Uint8Array, at: number): number;
  flush(): void;
  readonly size: number;
  truncate(size: number): void;
  close(): void;
}

/** The subset of FileSystemSyncAccessHandle used here (declared so tests need no DOM types). */
export interface SyncAccessHandleLike {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  flush(): void;
  getSize(): number;
  truncate(size: number): void;
  close(): void;
}

/** Wraps an OPFS sync access handle (dedicated workers only). */
export function opfsSyncFile(handle: SyncAccessHandleLike): SyncFile {
  return {
    read: (buffer, at) => handle.read(buffer, { at }),
    write: (buffer, at) => handle.write(buffer, { at }),
    flush: () => handle.flush(),
    get size() {
      return handle.getSize();
    },
    truncate: (size) => handle.truncate(size),
    close: () => handle.close(),
  };
}

/** Reads exactly buffer.length bytes at `at` (short reads past the end leave zeros). */
export function readFully(file: SyncFile, buffer: Uint8Array, at: number): void {
  let done = 0;
  while (done < buffer.length) {
    const n = file.read(buffer.subarray(done), at + done);
    if (n <= 0) break;
    done += n;
  }
}

/** Writes all of buffer at `at`. */
export function writeFully(file: SyncFile, buffer: Uint8Array, at: number): void {
  let done = 0;
  while (done < buffer.length) {
    const n = file.write(buffer.subarray(done), at + done);
    if (n <= 0) throw new Error(`short write at ${at + done}`);
    done += n;
  }
}

/** What the machine needs of its disk beside v86's own interface. */
export interface MachineDisk {
  /** True once the guest wrote anything since the last clearDirty(). */
  dirty: boolean;
  /** Called on the first write after clearDirty() (e.g. to record "disk moved on" durably). */
  onFirstWrite: (() => void) | undefined;
  clearDirty(): void;
  flush(): void;
  /** Resolves once every read and write issued so far is done (a disk that answers later). */
  settled?(): Promise<void>;
}

/**
 * v86's disk object. Writes go straight to the file and raise the `dirty` flag, which the
 * machine uses to tell whether the disk still matches a saved state (see machine.ts).
 */
export class SyncFileDisk implements MachineDisk {
  readonly byteLength: number;
  onload: ((event: object) => void) | undefined = undefined;
  onprogress: ((event: object) => void) | undefined = undefined;
  /** True once the guest wrote anything since the last clearDirty(). */
  dirty = false;
  /** Called on the first write after clearDirty() (e.g. to record "disk moved on" durably). */
  onFirstWrite: (() => void) | undefined = undefined;
  bytesRead = 0;
  bytesWritten = 0;

  constructor(private readonly file: SyncFile, byteLength?: number) {
    this.byteLength = byteLength ?? file.size;
  }

  load(): void {
    this.onload?.({});
  }

  get_from_cache(offset: number, len: number): Uint8Array {
    const bytes = new Uint8Array(len);
    readFully(this.file, bytes, offset);
    this.bytesRead += len;
    return bytes;
  }

  get(offset: number, len: number, callback: (bytes: Uint8Array) => void): void {
    callback(this.get_from_cache(offset, len));
  }

  get_and_cache(offset: number, len: number, callback: (bytes: Uint8Array) => void): void {
    this.get(offset, len, callback);
  }

  set(offset: number, bytes: Uint8Array, callback: () => void): void {
    if (!this.dirty) {
      this.dirty = true;
      this.onFirstWrite?.();
    }
    writeFully(this.file, bytes, offset);
    this.bytesWritten += bytes.length;
    callback();
  }

  /** The whole disk is never handed out as one buffer. */
  get_buffer(callback: (buffer: ArrayBuffer | undefined) => void): void {
    callback(undefined);
  }

  /** Empty: the disk's contents are the file, not part of the machine state. */
  get_state(): unknown[] {
    return [];
  }

  set_state(_state: unknown): void {}

  clearDirty(): void {
    this.dirty = false;
  }

  flush(): void {
    this.file.flush();
  }
}
