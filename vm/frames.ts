// The guest agent's wire format (vm-images/README.md, "Transport"): "SDA1", u32 BE header
// length, u32 BE payload length, a JSON header with a string `type`, then raw payload bytes.
import { concatBytes } from './bytes.ts';

export const FRAME_MAGIC = new Uint8Array([0x53, 0x44, 0x41, 0x31]); // "SDA1"
export const FRAME_PREFIX = 12;
export const MAX_HEADER = 65536;
export const MAX_PAYLOAD = 16 * 1024 * 1024;

export interface FrameHeader {
  type: string;
  [field: string]: unknown;
}

export interface Frame {
  header: FrameHeader;
  payload: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const EMPTY = new Uint8Array(0);

/** Encodes one frame. Throws RangeError when the header or payload exceeds the protocol limits. */
export function encodeFrame(header: FrameHeader, payload: Uint8Array = EMPTY): Uint8Array {
  const head = encoder.encode(JSON.stringify(header));
  if (head.length > MAX_HEADER) throw new RangeError(`frame header of ${head.length} bytes exceeds ${MAX_HEADER}`);
  if (payload.length > MAX_PAYLOAD) throw new RangeError(`frame payload of ${payload.length} bytes exceeds ${MAX_PAYLOAD}`);
  const frame = new Uint8Array(FRAME_PREFIX + head.length + payload.length);
  frame.set(FRAME_MAGIC, 0);
  const view = new DataView(frame.buffer);
  view.setUint32(4, head.length);
  view.setUint32(8, payload.length);
  frame.set(head, FRAME_PREFIX);
  frame.set(payload, FRAME_PREFIX + head.length);
  return frame;
}

/**
 * Incremental decoder over an arbitrarily split byte stream. Bytes that do not start a valid
 * frame (bad magic, oversized lengths, a header that is not a JSON object with a string `type`)
 * are skipped up to the next magic; `skipped` counts them.
 */
export class FrameDecoder {
  private buf: Uint8Array = EMPTY;
  skipped = 0;

  /** Adds bytes; returns the frames they completed, in order. Never throws. */
  push(bytes: Uint8Array): Frame[] {
    this.buf = this.buf.length === 0 ? bytes.slice() : concatBytes(this.buf, bytes);
    const frames: Frame[] = [];
    for (;;) {
      const start = findMagic(this.buf);
      if (start < 0) {
        // Keep a tail that may be the start of a magic split across pushes.
        const keep = Math.min(this.buf.length, FRAME_MAGIC.length - 1);
        this.skipped += this.buf.length - keep;
        this.buf = this.buf.slice(this.buf.length - keep);
        return frames;
      }
      this.skipped += start;
      this.buf = this.buf.subarray(start);
      if (this.buf.length < FRAME_PREFIX) return frames;
      const view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
      const headLen = view.getUint32(4);
      const payloadLen = view.getUint32(8);
      if (headLen > MAX_HEADER || payloadLen > MAX_PAYLOAD) {
        this.skipBadMagic();
        continue;
      }
      const end = FRAME_PREFIX + headLen + payloadLen;
      if (this.buf.length < end) return frames;
      const header = parseHeader(this.buf.subarray(FRAME_PREFIX, FRAME_PREFIX + headLen));
      if (!header) {
        this.skipBadMagic();
        continue;
      }
      frames.push({ header, payload: this.buf.slice(FRAME_PREFIX + headLen, end) });
      this.buf = this.buf.subarray(end);
    }
  }

  /** Bytes held waiting for the rest of a frame. */
  get buffered(): number {
    return this.buf.length;
  }

  private skipBadMagic(): void {
    this.skipped += FRAME_MAGIC.length;
    this.buf = this.buf.subarray(FRAME_MAGIC.length);
  }
}

function parseHeader(bytes: Uint8Array): FrameHeader | null {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    if (value && typeof value === 'object' && !Array.isArray(value) && typeof (value as FrameHeader).type === 'string') {
      return value as FrameHeader;
    }
  } catch {
    // fall through: not a frame
  }
  return null;
}

function findMagic(b: Uint8Array): number {
  for (let i = 0; i + 4 <= b.length; i++) {
    if (b[i] === 0x53 && b[i + 1] === 0x44 && b[i + 2] === 0x41 && b[i + 3] === 0x31) return i;
  }
  return -1;
}
