// Properties of the guest agent's frame decoder over random input: whatever the bytes and however
// they are split, `push` returns, never throws, holds at most one frame's worth, and finds every
// real frame that follows the garbage.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFrame, FRAME_PREFIX, FrameDecoder, MAX_HEADER, MAX_PAYLOAD, type FrameHeader } from './frames.ts';

const header = fc.record({ type: fc.string({ minLength: 1, maxLength: 20 }), id: fc.string({ maxLength: 12 }), n: fc.integer() });
const payload = fc.uint8Array({ maxLength: 300 });
const frame = fc.record({ header, payload });

/** Splits `bytes` at the given cut points (each taken modulo the length). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => (bytes.length ? cut % bytes.length : 0)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const point of points) {
    parts.push(bytes.subarray(from, point));
    from = point;
  }
  parts.push(bytes.subarray(from));
  return parts;
}

const join = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

describe('FrameDecoder, on random input', () => {
  it('gives back exactly the frames encoded, however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (frames, cuts) => {
        const stream = join(frames.map((f) => encodeFrame(f.header as FrameHeader, f.payload)));
        const decoder = new FrameDecoder();
        const out = split(stream, cuts).flatMap((part) => decoder.push(part));
        expect(out.map((f) => f.header)).toEqual(frames.map((f) => f.header));
        expect(out.map((f) => [...f.payload])).toEqual(frames.map((f) => [...f.payload]));
        expect(decoder.skipped).toBe(0);
        expect(decoder.buffered).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on random bytes, and never holds more than one frame could need', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 512 }), { maxLength: 20 }), (chunks) => {
        const decoder = new FrameDecoder();
        for (const chunk of chunks) {
          expect(() => decoder.push(chunk)).not.toThrow();
          expect(decoder.buffered).toBeLessThanOrEqual(FRAME_PREFIX + MAX_HEADER + MAX_PAYLOAD);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('finds a real frame after garbage and truncated frames', () => {
    // Garbage without an "S" cannot start a frame of its own; a truncated frame can, and the
    // decoder must not wait forever on one that claims less than it has.
    const garbage = fc.uint8Array({ maxLength: 200 }).map((bytes) => bytes.map((byte) => (byte === 0x53 ? 0x54 : byte)));
    const noS = (bytes: Uint8Array) => bytes.map((byte) => (byte === 0x53 ? 0x54 : byte));
    const broken = fc.record({ header, payload }).map((f) => {
      // Nothing inside it may look like the start of another frame either.
      const bytes = encodeFrame({ ...f.header, type: f.header.type.replace(/S/g, 's'), id: f.header.id.replace(/S/g, 's') }, noS(f.payload));
      bytes[FRAME_PREFIX] = 0x7b + 1; // "|": the header is no longer JSON
      return bytes;
    });
    fc.assert(
      fc.property(garbage, fc.option(broken), frame, fc.array(fc.nat(), { maxLength: 6 }), (noise, bad, real, cuts) => {
        const stream = join([noise, ...(bad ? [bad] : []), encodeFrame(real.header as FrameHeader, real.payload)]);
        const decoder = new FrameDecoder();
        const out = split(stream, cuts).flatMap((part) => decoder.push(part));
        expect(out.map((f) => f.header)).toEqual([real.header]);
        expect(decoder.skipped).toBeGreaterThanOrEqual(noise.length);
      }),
      { numRuns: 300 },
    );
  });
});
