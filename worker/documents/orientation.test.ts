// The quarter-turn mark: where it goes in a JPEG and a PNG, that it is what tesseract.js looks for,
// and that a PNG carrying it is still a valid PNG (its chunk's CRC checks out).
import CRC32 from 'crc-32';
import { describe, expect, it } from 'vitest';
import { canTurn, greyPgm, withQuarterTurn } from './orientation.ts';

const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, ...new Array(14).fill(1), 0xff, 0xd9]);
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, ...new Array(13).fill(2), 9, 9, 9, 9, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]);

/** The orientation value tesseract.js finds in an image's first 500 bytes (its own pattern), or 1. */
function orientationSeen(image: Uint8Array): number {
  return Number(Array.from(image.slice(0, 500)).join(' ').match(/1 18 0 3 0 0 0 1 0 (\d)/)?.[1] ?? 1);
}

describe('withQuarterTurn', () => {
  it('marks a JPEG right after its start with the EXIF orientation of each turn', () => {
    for (const [turn, orientation] of [[90, 6], [180, 3], [270, 8]] as const) {
      const marked = withQuarterTurn(jpeg, turn);
      expect(Array.from(marked.subarray(0, 4))).toEqual([0xff, 0xd8, 0xff, 0xe1]);
      expect(new TextDecoder().decode(marked.subarray(6, 10))).toBe('Exif');
      expect(marked.subarray(4 + ((marked[4]! << 8) | marked[5]!))).toEqual(jpeg.subarray(2));
      expect(orientationSeen(marked)).toBe(orientation);
    }
    expect(orientationSeen(jpeg)).toBe(1);
  });

  it('marks a PNG with an eXIf chunk after its header, CRC and all', () => {
    const marked = withQuarterTurn(png, 90);
    const at = 33;
    const length = new DataView(marked.buffer).getUint32(at);
    expect(new TextDecoder().decode(marked.subarray(at + 4, at + 8))).toBe('eXIf');
    const crc = new DataView(marked.buffer).getUint32(at + 8 + length);
    expect(crc).toBe(CRC32.buf(marked.subarray(at + 4, at + 8 + length)) >>> 0);
    expect(marked.subarray(0, at)).toEqual(png.subarray(0, at));
    expect(marked.subarray(at + 12 + length)).toEqual(png.subarray(at));
    expect(orientationSeen(marked)).toBe(6);
  });

  it('leaves an image alone at no turn, and refuses other formats and angles', () => {
    expect(withQuarterTurn(jpeg, 0)).toBe(jpeg);
    const webp = new TextEncoder().encode('RIFF\0\0\0\0WEBPVP8 ');
    expect(canTurn(webp)).toBe(false);
    expect(canTurn(jpeg) && canTurn(png)).toBe(true);
    expect(() => withQuarterTurn(webp, 90)).toThrow(/JPEG, a PNG or a PGM/);
    expect(() => withQuarterTurn(jpeg, 45)).toThrow(/90, 180 or 270/);
  });
});

describe('greyscale PGM pages', () => {
  // A 3x2 image: pixels 10 20 30 / 40 50 60 (grey, as RGBA).
  const rgba = new Uint8ClampedArray([10, 20, 30, 40, 50, 60].flatMap((value) => [value, value, value, 255]));
  const pixels = (pgm: Uint8Array) => Array.from(pgm.subarray(pgm.length - 6));
  const header = (pgm: Uint8Array) => new TextDecoder().decode(pgm.subarray(0, pgm.length - 6));

  it('is a binary PGM of the page in grey', () => {
    const pgm = greyPgm(rgba, 3, 2);
    expect(header(pgm)).toBe('P5\n3 2\n255\n');
    expect(pixels(pgm)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(canTurn(pgm)).toBe(true);
  });

  it('turns pixel by pixel, clockwise', () => {
    const pgm = greyPgm(rgba, 3, 2);
    expect(header(withQuarterTurn(pgm, 90))).toBe('P5\n2 3\n255\n');
    expect(pixels(withQuarterTurn(pgm, 90))).toEqual([40, 10, 50, 20, 60, 30]);
    expect(pixels(withQuarterTurn(pgm, 180))).toEqual([60, 50, 40, 30, 20, 10]);
    expect(pixels(withQuarterTurn(pgm, 270))).toEqual([30, 60, 20, 50, 10, 40]);
    expect(withQuarterTurn(withQuarterTurn(pgm, 90), 270)).toEqual(pgm);
  });
});
