// A stack's own writes to the computer's disk: the blocks it changed, packed one after another
// in a data file, and a map file saying which disk block each slot holds. Everything else of
// the disk is the shared base image (base-chunks.ts). Only what a stack wrote costs it room.
//
//   overlay.map   64-byte header ("SDOVMAP1", block size, disk size, pairing id), then one
//                 u32 per slot: the disk block it holds + 1 (0: a slot not yet recorded)
//   overlay.data  a 4096-byte header ("SDOVDAT1", the same pairing id), then slot i at
//                 4096 + i * BLOCK_SIZE
//
// A new block's data is written before its map entry, so a tab killed between the two leaves a
// slot nobody points at (the guest never had that write acknowledged), never a map entry over
// garbage. Rewriting a block the stack already holds writes its slot in place.
import { readFully, writeFully, type SyncFile } from '../disk.ts';

export const BLOCK_SIZE = 4096;
/** The unit in which changes to the data file are told (a checkpoint's chunk). */
export const CHANGE_CHUNK = 64 * 1024;
const MAP_HEADER = 64;
const DATA_HEADER = 4096;
const MAP_MAGIC = 'SDOVMAP1';
const DATA_MAGIC = 'SDOVDAT1';

export class OverlayError extends Error {
  override readonly name = 'OverlayError';
}

export class Overlay {
  /** Disk block -> slot + 1 (0: the block is the base's). */
  private readonly slots: Uint32Array;
  private used: number;
  /**
   * New blocks the browser's storage had no room for: kept here and written by the next flush(),
   * which fails (so no save records this disk) until they are all in the files.
   */
  private readonly pending = new Map<number, Uint8Array>();
  /** Chunks (CHANGE_CHUNK bytes) of the data file written since the last takeChanges(). */
  private changed = new Set<number>();

  private constructor(
    private readonly data: SyncFile,
    private readonly map: SyncFile,
    readonly diskSize: number,
    slots: Uint32Array,
    used: number,
  ) {
    this.slots = slots;
    this.used = used;
  }

  /**
   * Opens the overlay in `data` and `map`; empty files (or files torn before their headers were
   * whole) become a new, empty overlay. Throws OverlayError for files of another disk size or
   * whose headers do not pair: never guess which blocks belong to the disk.
   */
  static open(data: SyncFile, map: SyncFile, diskSize: number): Overlay {
    if (diskSize % BLOCK_SIZE !== 0) throw new OverlayError(`the disk size ${diskSize} is not a multiple of ${BLOCK_SIZE}`);
    const blocks = diskSize / BLOCK_SIZE;
    if (map.size < MAP_HEADER || data.size < DATA_HEADER) return Overlay.create(data, map, diskSize);
    const header = new Uint8Array(MAP_HEADER);
    readFully(map, header, 0);
    const view = new DataView(header.buffer);
    if (text(header, 0, 8) !== MAP_MAGIC) throw new OverlayError('the disk overlay map is not one (bad magic)');
    if (view.getUint32(8, true) !== BLOCK_SIZE) throw new OverlayError(`the disk overlay uses ${view.getUint32(8, true)}-byte blocks`);
    if (view.getFloat64(16, true) !== diskSize) throw new OverlayError(`the disk overlay is of a ${view.getFloat64(16, true)}-byte disk, not ${diskSize}`);
    const pairing = header.slice(24, 40);
    const dataHeader = new Uint8Array(40);
    readFully(data, dataHeader, 0);
    if (text(dataHeader, 0, 8) !== DATA_MAGIC || !equal(dataHeader.subarray(24, 40), pairing)) {
      throw new OverlayError('the disk overlay data and map files do not belong together');
    }
    // Slots whose data never made it wholly to the file are not trusted.
    const dataSlots = Math.floor((data.size - DATA_HEADER) / BLOCK_SIZE);
    const recorded = Math.min(Math.floor((map.size - MAP_HEADER) / 4), dataSlots);
    const entries = new Uint8Array(recorded * 4);
    readFully(map, entries, MAP_HEADER);
    const entryView = new DataView(entries.buffer);
    const slots = new Uint32Array(blocks);
    for (let slot = 0; slot < recorded; slot++) {
      const value = entryView.getUint32(slot * 4, true);
      if (value === 0 || value > blocks) continue;
      slots[value - 1] = slot + 1;
    }
    const overlay = new Overlay(data, map, diskSize, slots, recorded);
    // Drop what the map cannot vouch for (data written, entry not), so the files agree again.
    if (map.size !== MAP_HEADER + recorded * 4) map.truncate(MAP_HEADER + recorded * 4);
    if (data.size !== DATA_HEADER + recorded * BLOCK_SIZE) data.truncate(DATA_HEADER + recorded * BLOCK_SIZE);
    return overlay;
  }

  /** Starts an empty overlay in the two files (whatever they held is dropped). */
  static create(data: SyncFile, map: SyncFile, diskSize: number): Overlay {
    const pairing = crypto.getRandomValues(new Uint8Array(16));
    const mapHeader = new Uint8Array(MAP_HEADER);
    mapHeader.set(new TextEncoder().encode(MAP_MAGIC), 0);
    const view = new DataView(mapHeader.buffer);
    view.setUint32(8, BLOCK_SIZE, true);
    view.setFloat64(16, diskSize, true);
    mapHeader.set(pairing, 24);
    const dataHeader = new Uint8Array(DATA_HEADER);
    dataHeader.set(new TextEncoder().encode(DATA_MAGIC), 0);
    dataHeader.set(pairing, 24);
    map.truncate(0);
    data.truncate(0);
    writeFully(data, dataHeader, 0);
    writeFully(map, mapHeader, 0);
    data.flush();
    map.flush();
    return new Overlay(data, map, diskSize, new Uint32Array(diskSize / BLOCK_SIZE), 0);
  }

  /** Whether the stack wrote this block (else it reads from the base). */
  has(block: number): boolean {
    return this.slots[block] !== 0 || this.pending.has(block);
  }

  /** Blocks written but not yet stored for want of room. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Copies `into.length` bytes of the block, from `offset` within it. */
  read(block: number, into: Uint8Array, offset = 0): void {
    const waiting = this.pending.get(block);
    if (waiting) {
      into.set(waiting.subarray(offset, offset + into.length));
      return;
    }
    const slot = this.slots[block]! - 1;
    if (slot < 0) throw new OverlayError(`block ${block} is not in the overlay`);
    readFully(this.data, into, DATA_HEADER + slot * BLOCK_SIZE + offset);
  }

  /**
   * Writes bytes into a block. A block not yet in the overlay must be written whole (`offset`
   * 0, BLOCK_SIZE bytes): the caller merges partial writes with the base's bytes first.
   */
  write(block: number, bytes: Uint8Array, offset = 0): void {
    const waiting = this.pending.get(block);
    if (waiting) {
      waiting.set(bytes, offset);
      return;
    }
    const existing = this.slots[block]!;
    if (existing) {
      const at = DATA_HEADER + (existing - 1) * BLOCK_SIZE + offset;
      writeFully(this.data, bytes, at);
      this.noteChange(at, bytes.length);
      return;
    }
    if (offset !== 0 || bytes.length !== BLOCK_SIZE) throw new OverlayError(`block ${block} is new to the overlay and must be written whole`);
    try {
      this.append(block, bytes);
    } catch (error) {
      if (!isQuotaError(error)) throw error;
      this.pending.set(block, bytes.slice()); // the guest goes on; flush() stores it once there is room
    }
  }

  private append(block: number, bytes: Uint8Array): void {
    const slot = this.used;
    writeFully(this.data, bytes, DATA_HEADER + slot * BLOCK_SIZE);
    this.noteChange(DATA_HEADER + slot * BLOCK_SIZE, BLOCK_SIZE);
    const entry = new Uint8Array(4);
    new DataView(entry.buffer).setUint32(0, block + 1, true);
    writeFully(this.map, entry, MAP_HEADER + slot * 4);
    this.used = slot + 1;
    this.slots[block] = slot + 1;
  }

  private noteChange(at: number, length: number): void {
    for (let chunk = Math.floor(at / CHANGE_CHUNK); chunk <= Math.floor((at + length - 1) / CHANGE_CHUNK); chunk++) this.changed.add(chunk);
  }

  /**
   * The chunks of the data file (CHANGE_CHUNK bytes each) written since the last call, and starts
   * counting again: a checkpoint reads only those of a disk it took before.
   */
  takeChanges(): Set<number> {
    const changed = this.changed;
    this.changed = new Set();
    return changed;
  }

  /** Blocks the stack holds, and the bytes they take. */
  get blockCount(): number {
    return this.used;
  }

  get bytes(): number {
    return DATA_HEADER + MAP_HEADER + this.used * (BLOCK_SIZE + 4);
  }

  /** The disk blocks the overlay holds, in slot order (export, tests). */
  *blocks(): Generator<number> {
    for (let block = 0; block < this.slots.length; block++) if (this.slots[block]) yield block;
  }

  /** Stores what waited for room (throws the storage's error while it still does not fit). */
  flush(): void {
    for (const [block, bytes] of this.pending) {
      this.append(block, bytes);
      this.pending.delete(block);
    }
    this.data.flush();
    this.map.flush();
  }
}

function isQuotaError(error: unknown): boolean {
  return error instanceof Error && error.name === 'QuotaExceededError';
}

function text(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
