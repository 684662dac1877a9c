// Where a checkpoint cuts the computer's saved state. A state is a header, an info block (JSON)
// and then the devices' buffers one after another (the guest's memory, the screen's 8 MB, each
// /workspace file...). Each buffer is cut on its own, from its own start, so a buffer that grows
// or a file added before it leaves its chunks as they were, and finding the cuts costs nothing.
// v86 saves the guest's memory packed: only its non-zero 4 KiB pages, one after another, beside a
// bitmap of which pages those are. A page that becomes zero (or stops being zero) moves every page
// after it along, so the memory is cut by address instead — each window of WINDOW_PAGES pages is
// one chunk, whatever moved before it — so a mission that touched a few pages adds a few chunks.
// The header and info block are cut by content.

/** The state's header (v86's src/state.js): magic, version, total length, info block length. */
const STATE_MAGIC = -2039052682;
const STATE_VERSION = 6;
const HEADER = 16;
const PAGE = 4096;
/** Pages per chunk of memory: 32 KiB of address space (measured: a third fewer new bytes than 64 KiB, as many chunks as content cuts). */
export const WINDOW_PAGES = 8;
const MAX_BITMAP = 1 << 20;

interface StateBuffer {
  at: number;
  length: number;
}

/** The state's buffers (where each lies in the file), or null if it is not a state this knows. */
function buffersOf(bytes: Uint8Array): StateBuffer[] | null {
  if (bytes.byteLength < HEADER) return null;
  const header = new DataView(bytes.buffer, bytes.byteOffset, HEADER);
  if (header.getInt32(0, true) !== STATE_MAGIC || header.getInt32(4, true) !== STATE_VERSION || header.getInt32(8, true) !== bytes.byteLength) return null;
  const infoLength = header.getInt32(12, true);
  if (infoLength <= 0 || HEADER + infoLength > bytes.byteLength) return null;
  let info: { buffer_infos?: { offset: number; length: number }[] };
  try {
    info = JSON.parse(new TextDecoder().decode(bytes.subarray(HEADER, HEADER + infoLength))) as typeof info;
  } catch {
    return null;
  }
  if (!Array.isArray(info.buffer_infos)) return null;
  const start = (HEADER + infoLength + 3) & ~3;
  const buffers = info.buffer_infos.map(({ offset, length }) => ({ at: start + offset, length }));
  return buffers.every(({ at, length }) => Number.isInteger(at) && Number.isInteger(length) && length >= 0 && at + length <= bytes.byteLength) ? buffers : null;
}

const BITS = new Uint8Array(256).map((_, byte) => {
  let count = 0;
  for (let v = byte; v; v >>= 1) count += v & 1;
  return count;
});

function setBits(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) count += BITS[bytes[i]!]!;
  return count;
}

/**
 * The packed memory and its bitmap: the pair where the bitmap's set bits are the memory's pages
 * (the largest such pair: small device buffers can pair by chance). Known by that alone, not by a
 * place in v86's state, which changes between versions.
 */
function packedMemory(bytes: Uint8Array, buffers: StateBuffer[]): { memory: StateBuffer; bitmap: StateBuffer } | null {
  const byLength = new Map<number, StateBuffer>();
  for (const buffer of buffers) if (buffer.length >= PAGE && buffer.length % PAGE === 0) byLength.set(buffer.length, buffer);
  let found: { memory: StateBuffer; bitmap: StateBuffer } | null = null;
  for (const bitmap of buffers) {
    // A bit per page: a bitmap is small (1 MiB covers 32 GiB).
    if (bitmap.length < 16 || bitmap.length > MAX_BITMAP) continue;
    const memory = byLength.get(setBits(bytes.subarray(bitmap.at, bitmap.at + bitmap.length)) * PAGE);
    if (memory && memory !== bitmap && memory.length > (found?.memory.length ?? 0)) found = { memory, bitmap };
  }
  return found;
}

/** A file's chunk, and a state's buffer's other than the memory: every FIXED_SPAN bytes from its start. */
export const FIXED_SPAN = 64 * 1024;

/** Spans of FIXED_SPAN bytes over `size` bytes (the last one shorter): [offset, length]. */
export function fixedSpans(size: number): [number, number][] {
  const spans: [number, number][] = [];
  for (let at = 0; at < size; at += FIXED_SPAN) spans.push([at, Math.min(FIXED_SPAN, size - at)]);
  return spans;
}

/** The packed memory's spans: one per window of WINDOW_PAGES pages with any page in use. */
function memorySpans(memory: StateBuffer, bits: Uint8Array): [number, number][] {
  const spans: [number, number][] = [];
  let at = memory.at;
  const pages = bits.length * 8;
  for (let window = 0; window < pages; window += WINDOW_PAGES) {
    let count = 0;
    for (let page = window; page < window + WINDOW_PAGES && page < pages; page++) if (bits[page >> 3]! & (1 << (page & 7))) count++;
    if (count === 0) continue;
    spans.push([at, count * PAGE]);
    at += count * PAGE;
  }
  return spans;
}

/**
 * The spans a saved state is cut into: the header and info block by content, each buffer from its
 * own start (the memory by address windows), the few bytes aligning the next buffer with the span
 * before them. Any other bytes (not a state of this v86) are cut by content alone.
 */
export function stateSpans(bytes: Uint8Array): [number, number][] {
  const buffers = buffersOf(bytes)?.filter(({ length }) => length > 0).sort((a, b) => a.at - b.at);
  const found = buffers && packedMemory(bytes, buffers);
  if (!buffers || !found) return contentSpans(bytes);
  const spans = contentSpans(bytes.subarray(0, buffers[0]?.at ?? bytes.byteLength));
  let end = spans.reduce((sum, [, length]) => sum + length, 0);
  const upTo = (at: number) => {
    const last = spans[spans.length - 1];
    if (at > end && last) last[1] += at - end;
    end = at;
  };
  for (const buffer of buffers) {
    if (buffer.at < end) return contentSpans(bytes); // overlapping buffers: not a layout this knows
    upTo(buffer.at);
    if (buffer === found.memory) spans.push(...memorySpans(buffer, bytes.subarray(found.bitmap.at, found.bitmap.at + found.bitmap.length)));
    else spans.push(...fixedSpans(buffer.length).map(([at, length]): [number, number] => [buffer.at + at, length]));
    end = buffer.at + buffer.length;
  }
  upTo(bytes.byteLength);
  return spans;
}

/** A table of 256 pseudo-random words for the rolling hash below (fixed: cuts must be the same in every run). */
const GEAR = (() => {
  const table = new Uint32Array(256);
  let state = 0x9e3779b9;
  for (let i = 0; i < 256; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    table[i] = state >>> 0;
  }
  return table;
})();
const CDC_MIN = 4 * 1024;
const CDC_MAX = 64 * 1024;
/** A cut where the rolling hash's low 14 bits are zero: about every 16 KiB past the minimum. */
const CDC_MASK = (1 << 14) - 1;

/**
 * Content-defined spans (a gear rolling hash, as in FastCDC): a cut depends only on the bytes
 * just before it, so content that moved (a longer header before a memory image) is cut the same
 * way and its chunks match the last checkpoint's.
 */
export function contentSpans(bytes: Uint8Array): [number, number][] {
  const spans: [number, number][] = [];
  let start = 0;
  while (start < bytes.length) {
    const end = Math.min(bytes.length, start + CDC_MAX);
    let cut = end;
    let hash = 0;
    for (let i = start + CDC_MIN; i < end; i++) {
      hash = ((hash << 1) + GEAR[bytes[i]!]!) | 0;
      if ((hash & CDC_MASK) === 0) {
        cut = i + 1;
        break;
      }
    }
    spans.push([start, cut - start]);
    start = cut;
  }
  return spans;
}
