import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder } from './frames.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('frames', () => {
  it('round-trips a header and payload', () => {
    const frame = encodeFrame({ type: 'stdout', id: 'e1' }, bytes('hello'));
    expect([...frame.subarray(0, 4)]).toEqual([0x53, 0x44, 0x41, 0x31]);
    const [decoded] = new FrameDecoder().push(frame);
    expect(decoded?.header).toEqual({ type: 'stdout', id: 'e1' });
    expect(new TextDecoder().decode(decoded?.payload)).toBe('hello');
  });

  it('reassembles frames split and merged arbitrarily', () => {
    const a = encodeFrame({ type: 'a' }, bytes('x'.repeat(100)));
    const b = encodeFrame({ type: 'b' });
    const stream = new Uint8Array([...a, ...b, ...a]);
    const decoder = new FrameDecoder();
    const types: string[] = [];
    for (let i = 0; i < stream.length; i += 7) {
      for (const f of decoder.push(stream.subarray(i, i + 7))) types.push(f.header.type);
    }
    expect(types).toEqual(['a', 'b', 'a']);
    expect(decoder.skipped).toBe(0);
    expect(decoder.buffered).toBe(0);
  });

  it('skips garbage and bad headers up to the next magic', () => {
    const good = encodeFrame({ type: 'ok' });
    const badHeader = encodeFrame({ type: 'x' });
    badHeader[12] = 0x7b + 1; // no longer JSON
    const noType = encodeFrame({ kind: 'x' } as never);
    const stream = new Uint8Array([...bytes('noise SD'), ...badHeader, ...noType, ...good]);
    const decoder = new FrameDecoder();
    const frames = decoder.push(stream);
    expect(frames.map((f) => f.header.type)).toEqual(['ok']);
    expect(decoder.skipped).toBeGreaterThan(8);
  });

  it('rejects a frame claiming an oversized header without waiting for it', () => {
    const bogus = new Uint8Array([0x53, 0x44, 0x41, 0x31, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    const frames = new FrameDecoder().push(new Uint8Array([...bogus, ...encodeFrame({ type: 'ok' })]));
    expect(frames.map((f) => f.header.type)).toEqual(['ok']);
  });

  it('keeps a magic split across pushes', () => {
    const frame = encodeFrame({ type: 'ok' });
    const decoder = new FrameDecoder();
    expect(decoder.push(new Uint8Array([1, 2, 3, ...frame.subarray(0, 2)]))).toEqual([]);
    expect(decoder.push(frame.subarray(2)).map((f) => f.header.type)).toEqual(['ok']);
    expect(decoder.skipped).toBe(3);
  });
});
