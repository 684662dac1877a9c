// readUpright's choices, against a scripted tesseract: when it searches for a turn and when it
// does not, which read it keeps, when it straightens, and what it reports. (The real engine on
// turned and skewed scans: recall.test.ts.)
import type { Page } from 'tesseract.js';
import { describe, expect, it } from 'vitest';
import { lineSlope, quarterTurn, readUpright, STRAIGHTEN_FROM, STRAIGHTER_BY, type TesseractRead } from './ocr.ts';
import { withQuarterTurn } from './orientation.ts';

const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xd9]);

/** A page of `lines` text lines sloping by `slope` radians, read at `confidence`. */
function page(confidence: number, slope = 0, lines = 5): Page {
  const line = (i: number) => ({
    text: `line ${i}`,
    confidence,
    baseline: { x0: 0, y0: 100 * i, x1: 1000, y1: 100 * i + 1000 * Math.tan(slope), has_baseline: true },
    words: [{ text: `word${i}`, confidence }],
  });
  return { text: `text at ${confidence}`, confidence, blocks: [{ paragraphs: [{ lines: Array.from({ length: lines }, (_, i) => line(i)) }] }] } as unknown as Page;
}

/** The quarter turn a read was asked for, from the image's mark. */
function turnOf(image: Uint8Array): number {
  const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);
  return [90, 180, 270].find((turn) => same(image, withQuarterTurn(JPEG, turn))) ?? 0;
}

/** A tesseract that reads well only at `upright` (a quarter turn), sloping `slope` until straightened. */
function scripted(upright: number, slope = 0) {
  const calls: { turn: number; rotateRadians?: number }[] = [];
  const read: TesseractRead = async (image, _languages, options) => {
    const turn = turnOf(image);
    calls.push({ turn, ...options });
    const straightened = options.rotateRadians !== undefined && Math.abs(options.rotateRadians + slope) < 0.001;
    return turn === upright ? page(straightened || !slope ? 92 : 84, straightened ? 0 : slope) : page(35);
  };
  return { read, calls };
}

describe('readUpright', () => {
  it('reads an upright page once, and says nothing of a turn', async () => {
    const { read, calls } = scripted(0);
    const result = await readUpright(read)(JPEG, 'eng');
    expect(calls).toEqual([{ turn: 0 }]);
    expect(result).toMatchObject({ confidence: 92 });
    expect(result.rotation).toBeUndefined();
  });

  it('finds a page lying a quarter or half turn round, and stops at the first sure read', async () => {
    for (const [upright, tried] of [[90, [0, 90]], [270, [0, 90, 270]], [180, [0, 90, 270, 180]]] as const) {
      const { read, calls } = scripted(upright);
      const result = await readUpright(read)(JPEG, 'eng');
      expect(calls.map((call) => call.turn), `upright at ${upright}`).toEqual(tried);
      expect(result.confidence).toBe(92);
      expect(quarterTurn(result.rotation)).toBe(upright);
    }
  });

  it('tries the turn the previous page needed first', async () => {
    const { read, calls } = scripted(270);
    const result = await readUpright(read)(JPEG, 'eng', { turn: 270 });
    expect(calls.map((call) => call.turn)).toEqual([270]);
    expect(quarterTurn(result.rotation)).toBe(270);
    // A page that breaks the pattern is searched for as usual, the hinted turn not tried twice.
    const other = scripted(90);
    await readUpright(other.read)(JPEG, 'eng', { turn: 270 });
    expect(other.calls.map((call) => call.turn)).toEqual([270, 0, 90]);
  });

  it('keeps the surest read when no turn reads well, and searches no turn for a page without words', async () => {
    const { read, calls } = scripted(-1);
    expect((await readUpright(read)(JPEG, 'eng')).confidence).toBe(35);
    expect(calls).toHaveLength(4);
    const blank = { calls: 0 };
    await readUpright(async () => (blank.calls++, { ...page(0, 0, 0), text: '', blocks: [] } as unknown as Page))(JPEG, 'eng');
    expect(blank.calls).toBe(1);
  });

  it('cannot turn a WebP: reads it as it comes', async () => {
    const webp = new TextEncoder().encode('RIFF\0\0\0\0WEBPVP8 ');
    const calls: number[] = [];
    const result = await readUpright(async (image) => (calls.push(image.length), page(35)))(webp, 'eng');
    expect(calls).toEqual([webp.length]);
    expect(result.confidence).toBe(35);
  });

  it('straightens a page sloping 2° or more, not less, and reports the rotation', async () => {
    const steep = scripted(0, (3 * Math.PI) / 180);
    const result = await readUpright(steep.read)(JPEG, 'eng');
    expect(steep.calls).toEqual([{ turn: 0 }, { turn: 0, rotateRadians: expect.closeTo(-(3 * Math.PI) / 180) }]);
    expect(result.confidence).toBe(92);
    expect(result.rotation).toBeCloseTo(-(3 * Math.PI) / 180);
    const slight = scripted(0, STRAIGHTEN_FROM * 0.7);
    await readUpright(slight.read)(JPEG, 'eng');
    expect(slight.calls).toHaveLength(1);
  });

  it('keeps the crooked read unless the straightened one is clearly surer', async () => {
    const slope = (3 * Math.PI) / 180;
    for (const [straightened, kept] of [[84 + STRAIGHTER_BY - 1, 0], [84 + STRAIGHTER_BY, -slope]] as const) {
      const read: TesseractRead = async (_image, _languages, options) => (options.rotateRadians ? page(straightened) : page(84, slope));
      expect((await readUpright(read)(JPEG, 'eng')).rotation ?? 0, `straightened at ${straightened}`).toBeCloseTo(kept);
    }
  });

  it('reads a page again exactly as a previous read turned it (another language)', async () => {
    const { read, calls } = scripted(90);
    const rotation = Math.PI / 2 - 0.05;
    const result = await readUpright(read)(JPEG, 'deu+eng', { rotation });
    expect(calls).toEqual([{ turn: 90, rotateRadians: expect.closeTo(-0.05) }]);
    expect(result.rotation).toBe(rotation);
  });
});

describe('lineSlope', () => {
  it('is the median slope of the long lines, 0 with fewer than three', () => {
    expect(lineSlope(page(90, 0.05))).toBeCloseTo(0.05);
    expect(lineSlope(page(90, 0.05, 2))).toBe(0);
  });
});
