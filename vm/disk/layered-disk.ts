// The computer's hard disk as v86 sees it, in two layers: a block the stack wrote comes from its
// overlay (overlay.ts), any other from the shared base image (base-chunks.ts), fetched the first
// time anything reads it. v86 takes a disk whose reads answer later (its async buffers), so a
// read of a chunk not yet in this browser simply waits for it.
//
// Order is kept: while any operation waits, later ones queue behind it, so a read always sees
// every write v86 issued before it (v86 carries on after a PIO write without waiting for it).
import type { MachineDisk } from '../disk.ts';
import type { BaseChunks } from './base-chunks.ts';
import { BLOCK_SIZE, type Overlay } from './overlay.ts';

export class LayeredDisk implements MachineDisk {
  readonly byteLength: number;
  onload: ((event: object) => void) | undefined = undefined;
  onprogress: ((event: object) => void) | undefined = undefined;
  dirty = false;
  onFirstWrite: (() => void) | undefined = undefined;
  bytesRead = 0;
  bytesWritten = 0;
  /** Chunk indices of the base that reads or partial writes touched (the image build records them). */
  readonly touched = new Set<number>();
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  private failure: unknown = null;

  constructor(
    private readonly overlay: Overlay,
    private readonly base: BaseChunks,
  ) {
    this.byteLength = overlay.diskSize;
  }

  load(): void {
    this.onload?.({});
  }

  get(offset: number, len: number, callback: (bytes: Uint8Array) => void): void {
    this.bytesRead += len;
    const needed = this.chunksFor(offset, len, () => true);
    if (this.queued === 0) {
      const now = this.readNow(offset, len, needed, (index) => this.base.peek(index));
      if (now) return callback(now);
    }
    this.enqueue(async () => {
      const chunks = await this.loadChunks(needed);
      callback(this.readNow(offset, len, needed, (index) => chunks.get(index) ?? null)!);
    });
  }

  get_from_cache(offset: number, len: number): Uint8Array | undefined {
    if (this.queued) return undefined;
    return this.readNow(offset, len, this.chunksFor(offset, len, () => true), (index) => this.base.peek(index)) ?? undefined;
  }

  get_and_cache(offset: number, len: number, callback: (bytes: Uint8Array) => void): void {
    this.get(offset, len, callback);
  }

  set(offset: number, bytes: Uint8Array, callback: () => void): void {
    if (!this.dirty) {
      this.dirty = true;
      this.onFirstWrite?.();
    }
    this.bytesWritten += bytes.length;
    // Only blocks written in part and new to the overlay need the base's bytes around the write.
    const needed = this.chunksFor(offset, bytes.length, (block, from, to) => (from !== 0 || to !== BLOCK_SIZE) && !this.overlay.has(block));
    if (this.queued === 0 && needed.every((index) => this.base.peek(index) || !this.base.chunkAt(index))) {
      this.writeNow(offset, bytes, (index) => this.base.peek(index));
      return callback();
    }
    const copy = bytes.slice(); // v86 reuses its buffer for the next command
    this.enqueue(async () => {
      const chunks = await this.loadChunks(needed);
      this.writeNow(offset, copy, (index) => chunks.get(index) ?? null);
      callback();
    });
  }

  /** The whole disk is never handed out as one buffer. */
  get_buffer(callback: (buffer: ArrayBuffer | undefined) => void): void {
    callback(undefined);
  }

  /** Empty: the disk's contents are the overlay and the base, not part of the machine state. */
  get_state(): unknown[] {
    return [];
  }

  set_state(_state: unknown): void {}

  clearDirty(): void {
    this.dirty = false;
  }

  flush(): void {
    if (this.failure) throw this.failure;
    this.overlay.flush();
  }

  /** Resolves once every read and write v86 issued so far is done (before a save). */
  settled(): Promise<void> {
    return this.queue.then(() => {
      if (this.failure) throw this.failure;
    });
  }

  private enqueue(run: () => Promise<void>): void {
    this.queued++;
    this.queue = this.queue
      .then(run)
      .catch((error: unknown) => {
        // Storage failing under the guest: later saves must not record this disk as consistent.
        this.failure ??= error;
        console.error('the computer\'s disk failed', error);
      })
      .finally(() => this.queued--);
  }

  private async loadChunks(indices: number[]): Promise<Map<number, Uint8Array>> {
    const entries = await Promise.all(indices.map(async (index) => [index, await this.base.load(index, true)] as const));
    return new Map(entries);
  }

  /** The base chunks (by index) holding the blocks of a range that `want` picks. */
  private chunksFor(offset: number, len: number, want: (block: number, from: number, to: number) => boolean): number[] {
    const chunks = new Set<number>();
    const chunkSize = this.base.chunkSize;
    for (let at = offset; at < offset + len; ) {
      const block = Math.floor(at / BLOCK_SIZE);
      const from = at - block * BLOCK_SIZE;
      const to = Math.min(BLOCK_SIZE, offset + len - block * BLOCK_SIZE);
      if (!this.overlay.has(block) && want(block, from, to)) {
        const index = Math.floor((block * BLOCK_SIZE) / chunkSize);
        if (this.base.chunkAt(index)) chunks.add(index);
      }
      at = (block + 1) * BLOCK_SIZE;
    }
    for (const index of chunks) this.touched.add(index);
    return [...chunks];
  }

  /** The bytes of a range, or null when a base chunk it needs is not at hand. */
  private readNow(offset: number, len: number, needed: number[], chunk: (index: number) => Uint8Array | null): Uint8Array | null {
    const chunks = new Map<number, Uint8Array>();
    for (const index of needed) {
      const bytes = chunk(index);
      if (!bytes) return null;
      chunks.set(index, bytes);
    }
    const out = new Uint8Array(len);
    const chunkSize = this.base.chunkSize;
    for (let at = offset; at < offset + len; ) {
      const block = Math.floor(at / BLOCK_SIZE);
      const from = at - block * BLOCK_SIZE;
      const to = Math.min(BLOCK_SIZE, offset + len - block * BLOCK_SIZE);
      const into = out.subarray(at - offset, at - offset + (to - from));
      if (this.overlay.has(block)) {
        this.overlay.read(block, into, from);
      } else {
        const index = Math.floor(at / chunkSize);
        const bytes = chunks.get(index);
        if (bytes) into.set(bytes.subarray(at - index * chunkSize, at - index * chunkSize + into.length));
        // else: a chunk the image does not list is all zeros, as `out` already is
      }
      at = block * BLOCK_SIZE + to;
    }
    return out;
  }

  private writeNow(offset: number, bytes: Uint8Array, chunk: (index: number) => Uint8Array | null): void {
    const chunkSize = this.base.chunkSize;
    for (let at = offset; at < offset + bytes.length; ) {
      const block = Math.floor(at / BLOCK_SIZE);
      const from = at - block * BLOCK_SIZE;
      const to = Math.min(BLOCK_SIZE, offset + bytes.length - block * BLOCK_SIZE);
      const piece = bytes.subarray(at - offset, at - offset + (to - from));
      if (this.overlay.has(block) || (from === 0 && to === BLOCK_SIZE)) {
        this.overlay.write(block, piece, from);
      } else {
        // A block new to the overlay and written in part: the base's block around the write.
        const whole = new Uint8Array(BLOCK_SIZE);
        const index = Math.floor((block * BLOCK_SIZE) / chunkSize);
        const base = this.base.chunkAt(index) ? chunk(index) : null;
        if (this.base.chunkAt(index) && !base) throw new Error(`disk chunk ${index} was not loaded before a write into it`);
        if (base) {
          const start = block * BLOCK_SIZE - index * chunkSize;
          whole.set(base.subarray(start, start + BLOCK_SIZE));
        }
        whole.set(piece, from);
        this.overlay.write(block, whole);
      }
      at = block * BLOCK_SIZE + to;
    }
  }
}
