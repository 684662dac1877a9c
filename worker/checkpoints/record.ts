// The checkpoint format: the whole stack at moments in time, kept in `.os/checkpoints/` beside it.
// Every file is cut into 64 KiB chunks named by their SHA-256; a chunk already held by an earlier
// checkpoint is not stored again, so a checkpoint costs only what changed since the ones kept —
// the computer's memory pages and disk blocks a mission touched, the files it wrote.
//
//   .os/checkpoints/packs/<id>.pack   the chunks new in checkpoint <id>, each compressed (zstd;
//                                     deflate in older packs) when that pays, one after another
//                                     (written once, never changed)
//   .os/checkpoints/<id>.json         the checkpoint: every file with its size and its chunks
//                                     (hash, pack, offset, stored length, how it is packed)
//
// A checkpoint's JSON is written last: one cut short (a killed tab) leaves only a pack nobody
// names, which the next open removes. Pruning removes the JSON first, then every pack no kept
// checkpoint names.
import { sha256Hex } from '../../storage/hash.ts';
import type { Packing } from './codec.ts';
import { FIXED_SPAN, stateSpans } from './spans.ts';

export const CHUNK_SIZE = FIXED_SPAN;
export const CHECKPOINTS_DIR = 'checkpoints';
export const PACKS = 'packs';
export const FORMAT = 1;
export const CHECKPOINT_ID = /^c-[0-9a-z]+-[0-9a-f]{6}$/;

/** Where a chunk's bytes are: [hash, pack id, offset in the pack, stored bytes, how they are packed (codec.ts)]. */
export type ChunkRef = [hash: string, pack: string, at: number, length: number, packing: Packing];

export interface CheckpointFile {
  size: number;
  /** What the file was when it was read (size and modification time); equal means unchanged. */
  stamp?: string;
  chunks: ChunkRef[];
}

export type CheckpointReason = 'mission' | 'manual' | 'scheduled' | 'before_restore';

export interface CheckpointChanges {
  /** User files (paths under /workspace) added, removed and changed since the previous checkpoint. */
  added: string[];
  removed: string[];
  changed: string[];
  /** The computer's memory or disk moved on; the databases (chat, memory, tables) changed. */
  computer: boolean;
  databases: boolean;
}

export interface CheckpointRecord {
  format: number;
  id: string;
  created_at: number;
  reason: CheckpointReason;
  /** What it was taken before: the user's message, or "Checkpoint now". */
  label: string;
  /** The page's canvas layout (window places), when it gave one. */
  layout: string | null;
  files: Record<string, CheckpointFile>;
  changes: CheckpointChanges;
  /** Bytes this checkpoint added to the store (its pack). */
  added_bytes: number;
  /** The files' whole size: what restoring it writes. */
  total_bytes: number;
}

/** One file to keep: read in chunks, unless `stamp` (or `unchanged`) says the last checkpoint's chunks still hold. */
export interface CheckpointSource {
  path: string;
  size: number;
  stamp?: string;
  /** Chunk `index` is the same as in the previous checkpoint's file of this path (known without reading). */
  unchanged?(index: number): boolean;
  /**
   * The whole file in memory (the computer's saved state): cut where its layout and content say
   * rather than every 64 KiB, so bytes moved along by something inserted before them still match
   * (spans.ts).
   */
  bytes?: Uint8Array;
  /** The cuts of `bytes` and their hashes, when they were begun before the checkpoint (digestState). */
  digest?: Promise<StateDigest>;
  read(at: number, length: number): Promise<Uint8Array>;
}

/** A saved state's cuts (spans.ts), the hash of each, and the time each took. */
export interface StateDigest {
  spans: [number, number][];
  hashes: string[];
  ms: { cut: number; hash: number };
}

/**
 * Cuts and hashes a state in memory: all its chunks at once (one digest after another would wait
 * on each). Begun as soon as the state is captured, it runs while the stack's files are listed.
 */
export async function digestState(bytes: Uint8Array): Promise<StateDigest> {
  const began = performance.now();
  const spans = stateSpans(bytes);
  const cut = performance.now();
  const hashes = await Promise.all(spans.map(([at, length]) => chunkHash(bytes.subarray(at, at + length))));
  return { spans, hashes, ms: { cut: cut - began, hash: performance.now() - cut } };
}

export interface TakeOptions {
  reason: CheckpointReason;
  label: string;
  layout: string | null;
  sources: CheckpointSource[];
  /** Which paths are user files (listed in the changes by name). */
  isUserFile(path: string): boolean;
  /** Paths of the computer (compared as one thing). */
  isComputer(path: string): boolean;
  isDatabase(path: string): boolean;
}

export interface KeepRule {
  /** The newest `last` are kept, and the newest of each of the last `days` days. */
  last: number;
  days: number;
}

export const KEEP_RULE: KeepRule = { last: 20, days: 7 };

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
  constructor(
    readonly code: 'not_found' | 'damaged',
    message: string,
  ) {
    super(message);
  }
}

/** A chunk's name: the first 16 bytes of its SHA-256, in hex. */
export function chunkHash(bytes: Uint8Array): Promise<string> {
  return sha256Hex(bytes, 16);
}
