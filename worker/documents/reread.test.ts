// rereadUnsure against a scripted tesseract: which words are read again, inside what rectangle,
// and when the new read takes their place. (The real engine on the generated scans: recall.test.ts.)
import type { Page } from 'tesseract.js';
import { describe, expect, it } from 'vitest';
import { MAX_REREADS, rereadUnsure, unsureRuns, type Rectangle } from './reread.ts';

type Spec = [x: number, text: string, confidence: number, height?: number];

/** A line of words at `y`, each placed at its x, 10 px a character, 20 px high unless told. */
function line(y: number, ...words: Spec[]) {
  const placed = words.map(([x, text, confidence, height = 20]) => ({ text, confidence, bbox: { x0: x, y0: y, x1: x + text.length * 10, y1: y + height } }));
  return { words: placed, bbox: { x0: placed[0]!.bbox.x0, y0: y, x1: placed.at(-1)!.bbox.x1, y1: y + 20 } };
}
const page = (...lines: ReturnType<typeof line>[]) => ({ confidence: 80, text: '', blocks: [{ paragraphs: [{ lines }] }] }) as unknown as Page;
const text = (read: Page) => read.blocks!.flatMap((block) => block.paragraphs.flatMap((paragraph) => paragraph.lines.map((l) => l.words.map((w) => w.text).join(' '))));

/** A tesseract that reads each rectangle as `answers` says (by its left edge), and notes the rectangles. */
function scripted(answers: Record<number, ReturnType<typeof line>[]>) {
  const asked: Rectangle[] = [];
  const read = async (rectangle: Rectangle) => {
    asked.push(rectangle);
    const lines = Object.entries(answers).find(([left]) => Math.abs(Number(left) - rectangle.left) <= 12)?.[1] ?? [];
    return page(...lines);
  };
  return { read, asked };
}

describe('rereadUnsure', () => {
  it('reads a run of unsure words again in a rectangle around them and takes the surer read', async () => {
    // "Louisville, KY 40202   Inge s   2022010": the right part read against the wrong baseline.
    const read = page(line(200, [100, 'Louisville,', 95], [220, 'KY', 95], [260, '40202', 95], [600, 'Inge', 0], [650, 's', 0], [900, '2022010', 43]));
    const tesseract = scripted({ 590: [line(200, [600, 'Invoice', 93], [680, '#', 93])], 890: [line(200, [900, '2025-0790', 96])] });
    expect(await rereadUnsure(read, tesseract.read)).toBe(2);
    expect(text(read)).toEqual(['Louisville, KY 40202 Invoice # 2025-0790']);
    // The least sure run first; each rectangle half a word height wider on every side.
    expect(tesseract.asked).toEqual([
      { left: 590, top: 190, width: 80, height: 40 },
      { left: 890, top: 190, width: 90, height: 40 },
    ]);
  });

  it('keeps the words when the new read is no surer, unsure still, or more than one line', async () => {
    const words = () => page(line(200, [100, 'Total', 95], [300, '1142.32', 32]));
    for (const answer of [[line(200, [300, 'JED', 6])], [line(200, [300, '112.32', 55])], [line(190, [300, '112', 90]), line(215, [300, '.32', 90])], []]) {
      const read = words();
      expect(await rereadUnsure(read, scripted({ 290: answer }).read)).toBe(0);
      expect(text(read)).toEqual(['Total 1142.32']);
    }
  });

  it('does not reach into the words either side of the run', async () => {
    // "two staff (hours)": a rectangle padded into "(hours)" read its bracket into the run.
    const read = page(line(200, [100, 'two', 96], [140, 'staff', 50], [192, '(hours)', 91]));
    const tesseract = scripted({ 131: [line(200, [140, 'staff', 93])] });
    await rereadUnsure(read, tesseract.read);
    expect(tesseract.asked).toEqual([{ left: 131, top: 190, width: 60, height: 40 }]);
    expect(text(read)).toEqual(['two staff (hours)']);
  });

  it('leaves specks alone and reads at most MAX_REREADS runs a page', async () => {
    expect(unsureRuns(line(200, [100, 'Catering', 96], [300, ':', 0, 2], [400, 'Z', 0, 14], [500, '78.48', 96]))).toEqual([[expect.objectContaining({ text: 'Z' })]]);
    const many = page(...Array.from({ length: MAX_REREADS + 3 }, (_, i) => line(40 * i, [100, 'word', 90], [300, `x${i}`, i])));
    const tesseract = scripted({});
    await rereadUnsure(many, tesseract.read);
    expect(tesseract.asked).toHaveLength(MAX_REREADS);
  });

  it('does nothing with a read that has no boxes', async () => {
    const bare = { confidence: 40, text: 'x', blocks: [{ paragraphs: [{ lines: [{ words: [{ text: 'x', confidence: 10 }] }] }] }] } as unknown as Page;
    const tesseract = scripted({});
    expect(await rereadUnsure(bare, tesseract.read)).toBe(0);
    expect(tesseract.asked).toHaveLength(0);
  });
});
