// How a checkpoint cuts a saved state: the memory v86 packs (its non-zero pages beside a bitmap)
// by address window, so a changed page, a page turned to zero or a longer info block before the
// memory leaves every other window's chunk as it was; every other buffer from its own start, so a
// file added before it leaves it as it was; the spans tile the file; anything that is not such a
// state is cut by content.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FIXED_SPAN, contentSpans, stateSpans, WINDOW_PAGES } from './spans.ts';

const PAGE = 4096;
const PAGES = 256; // 1 MiB of guest memory

/** A page of bytes from a seed (never all zero). */
function page(seed: number): Uint8Array {
  const bytes = new Uint8Array(PAGE);
  let state = seed * 2654435761 + 1;
  for (let i = 0; i < PAGE; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

/** A state as v86 0.5 writes it: header, info block (JSON), then buffers aligned to 4 bytes. */
function v86State(memory: Map<number, Uint8Array>, note = '', files: Uint8Array[] = []): Uint8Array {
  const bitmap = new Uint8Array(PAGES / 8);
  const indices = [...memory.keys()].sort((a, b) => a - b);
  for (const index of indices) bitmap[index >> 3]! |= 1 << (index & 7);
  const packed = new Uint8Array(indices.length * PAGE);
  indices.forEach((index, i) => packed.set(memory.get(index)!, i * PAGE));
  // A device's registers, the memory, its bitmap, /workspace files, the screen (zero), a last small one.
  const buffers = [new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]), packed, bitmap, ...files, new Uint8Array(8 * FIXED_SPAN), page(999).subarray(0, 3001)];
  const infos: { offset: number; length: number }[] = [];
  let total = 0;
  for (const buffer of buffers) {
    infos.push({ offset: total, length: buffer.length });
    total = (total + buffer.length + 3) & ~3;
  }
  const info = new TextEncoder().encode(JSON.stringify({ buffer_infos: infos, state: { note } }));
  const start = (16 + info.length + 3) & ~3;
  const bytes = new Uint8Array(start + total);
  const header = new DataView(bytes.buffer);
  header.setInt32(0, -2039052682, true);
  header.setInt32(4, 6, true);
  header.setInt32(8, bytes.length, true);
  header.setInt32(12, info.length, true);
  bytes.set(info, 16);
  buffers.forEach((buffer, i) => bytes.set(buffer, start + infos[i]!.offset));
  return bytes;
}

/** Every chunk's content hash, in order. */
function chunks(bytes: Uint8Array, spans = stateSpans(bytes)): string[] {
  let at = 0;
  for (const [offset, length] of spans) {
    expect(offset).toBe(at);
    expect(length).toBeGreaterThan(0);
    at += length;
  }
  expect(at).toBe(bytes.length);
  return spans.map(([offset, length]) => createHash('sha256').update(bytes.subarray(offset, offset + length)).digest('hex'));
}

/** Memory with most pages in use and some zero (absent), as a guest's is. */
function memory(): Map<number, Uint8Array> {
  const pages = new Map<number, Uint8Array>();
  for (let index = 0; index < PAGES; index++) if (index % 5 !== 3) pages.set(index, page(index));
  return pages;
}

const newChunks = (before: string[], after: string[]) => after.filter((hash) => !before.includes(hash)).length;

/** Bytes of `state`'s chunks that `before` does not hold. */
function newBytes(before: string[], state: Uint8Array, spans = stateSpans(state)): number {
  const hashes = chunks(state, spans);
  return spans.reduce((sum, [, length], i) => sum + (before.includes(hashes[i]!) ? 0 : length), 0);
}

describe('stateSpans', () => {
  it('cuts the packed memory into one chunk per window of pages in use, and tiles the file', () => {
    const pages = memory();
    const state = v86State(pages);
    const spans = stateSpans(state);
    chunks(state, spans);
    const memoryChunks = spans.filter(([, length]) => length % PAGE === 0 && length <= WINDOW_PAGES * PAGE && length >= PAGE);
    const windows = new Set([...pages.keys()].map((index) => Math.floor(index / WINDOW_PAGES)));
    expect(memoryChunks.length).toBeGreaterThanOrEqual(windows.size);
  });

  it('a changed page is one new chunk', () => {
    const pages = memory();
    const before = chunks(v86State(pages));
    pages.set(100, page(5000));
    expect(newChunks(before, chunks(v86State(pages)))).toBe(1);
  });

  it('a page turned to zero, or in use again, changes only its own window (and the small parts around the memory)', () => {
    const pages = memory();
    const first = v86State(pages);
    const before = chunks(first);
    const around = first.length - (pages.size * PAGE); // header, info block, bitmap and the other buffers
    pages.delete(17); // every packed page after it moves back by 4 KiB
    const second = v86State(pages);
    expect(newBytes(before, second)).toBeLessThanOrEqual(WINDOW_PAGES * PAGE + around);
    pages.set(3, page(4242)); // was zero
    pages.set(17, page(17));
    expect(newBytes(before, v86State(pages))).toBeLessThanOrEqual(WINDOW_PAGES * PAGE + around);
    // Cut by content, the same changes cost more: most windows after page 17 are cut elsewhere.
    expect(newBytes(chunks(first, contentSpans(first)), second, contentSpans(second))).toBeGreaterThan(newBytes(before, second));
  });

  it('keeps every memory chunk when the info block before the memory grows', () => {
    const pages = memory();
    const before = chunks(v86State(pages));
    const after = chunks(v86State(pages, 'a longer info block, as a /workspace file added makes'));
    expect(newChunks(before, after)).toBeLessThanOrEqual(3); // the header and info block, the buffers after the memory
    expect(after.length).toBe(before.length);
  });

  it('cuts each other buffer from its own start: a file added or grown leaves the buffers after it as they were', () => {
    const pages = memory();
    const file = (seed: number, length: number) => {
      const bytes = new Uint8Array(length);
      for (let at = 0; at < length; at += PAGE) bytes.set(page(seed + at / PAGE).subarray(0, length - at), at);
      return bytes;
    };
    const first = v86State(pages, '', [file(1, 70_001)]);
    const before = chunks(first);
    // Every buffer begins a span: cut from its own start, not where the bytes before it ended.
    const header = new DataView(first.buffer);
    const infoLength = header.getInt32(12, true);
    const { buffer_infos } = JSON.parse(new TextDecoder().decode(first.subarray(16, 16 + infoLength))) as { buffer_infos: { offset: number }[] };
    const starts = new Set(stateSpans(first).map(([at]) => at));
    for (const { offset } of buffer_infos) expect(starts.has(((16 + infoLength + 3) & ~3) + offset)).toBe(true);
    // The screen's zero bytes: one chunk, eight times.
    expect(before.filter((hash) => hash === createHash('sha256').update(new Uint8Array(FIXED_SPAN)).digest('hex'))).toHaveLength(8);
    // A file of 3 bytes added first, the old one grown by 5: the new file, the old one's tail span
    // and the info block are new; the memory, the screen and the last buffer are not.
    const second = v86State(pages, '', [file(7, 3), file(1, 70_006)]);
    expect(newBytes(before, second)).toBeLessThan(16 + 3 + (70_006 - FIXED_SPAN) + 1024);
  });

  it('cuts anything else by content', () => {
    const state = v86State(memory());
    for (const bytes of [page(1), state.subarray(0, state.length - 1), Uint8Array.from(state, (b, i) => (i < 4 ? 0 : b)), new Uint8Array(0)]) {
      expect(stateSpans(bytes)).toEqual(contentSpans(bytes));
    }
  });
});
