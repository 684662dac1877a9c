// Words tesseract was unsure of, read again on their own. Reading a page as one block, tesseract
// fits each line one baseline; where a line's right part sits a little higher (an invoice number
// in a box beside the address) or a speck of noise crowds a figure, it reads those words against
// the wrong baseline and returns garbage at a low confidence ("Inge s 2022010" for
// "Invoice # 2025-0790"). The same words read alone, in a rectangle around them, come out right
// and sure. A run of unsure words is replaced only by a read surer than it was.
import type { Line as TesseractLine, Page } from 'tesseract.js';
import type { Box, RowLine, RowWord } from './rows.ts';

/** A word read below this confidence (0..100) is read again. */
export const UNSURE_BELOW = 60;
/** At most this many runs are read again per page (each costs about 30 ms). */
export const MAX_REREADS = 8;

export interface Rectangle {
  left: number;
  top: number;
  width: number;
  height: number;
}

type Word = RowWord & { confidence: number };
interface Line extends RowLine {
  words: Word[];
}

/** Reads the page's image again, only inside `rectangle` (in the page's own frame, as its boxes are). */
export type ReadRectangle = (rectangle: Rectangle) => Promise<Page>;

/** A read page's text lines, block after block, in reading order. */
export function pageLines(page: Pick<Page, 'blocks'>): TesseractLine[] {
  return (page.blocks ?? []).flatMap((block) => block.paragraphs.flatMap((paragraph) => paragraph.lines));
}

const heightOf = (box: Box) => box.y1 - box.y0;
const mean = (words: Word[]) => words.reduce((sum, word) => sum + word.confidence, 0) / words.length;

/**
 * The runs of unsure words in a line: neighbouring words read below UNSURE_BELOW, each at least
 * 0.6 of the line's median word height and 8 px tall (not a speck), no more than four word
 * heights apart.
 */
export function unsureRuns(line: Line): Word[][] {
  const heights = line.words.map((word) => heightOf(word.bbox)).sort((a, b) => a - b);
  const median = heights[heights.length >> 1] ?? 0;
  const runs: Word[][] = [];
  let run: Word[] = [];
  for (const word of line.words) {
    const height = heightOf(word.bbox);
    const unsure = word.confidence < UNSURE_BELOW && height >= 8 && height >= 0.6 * median;
    if (unsure && run.length && word.bbox.x0 - run.at(-1)!.bbox.x1 < 4 * median) {
      run.push(word);
      continue;
    }
    if (run.length) runs.push(run);
    run = unsure ? [word] : [];
  }
  if (run.length) runs.push(run);
  return runs;
}

/**
 * The rectangle around a run's words, half their height wider on every side but not reaching
 * into the line's words either side of it (a bracket of theirs would be read into the run).
 */
function around(run: Word[], line: Line): Rectangle {
  const x0 = Math.min(...run.map((word) => word.bbox.x0));
  const x1 = Math.max(...run.map((word) => word.bbox.x1));
  const y0 = Math.min(...run.map((word) => word.bbox.y0));
  const y1 = Math.max(...run.map((word) => word.bbox.y1));
  const pad = Math.round((y1 - y0) / 2);
  const at = line.words.indexOf(run[0]!);
  const before = line.words[at - 1]?.bbox.x1 ?? -Infinity;
  const after = line.words[at + run.length]?.bbox.x0 ?? Infinity;
  const left = Math.max(0, x0 - pad, Math.min(x0, before + 1));
  const right = Math.min(x1 + pad, Math.max(x1, after - 1));
  const top = Math.max(0, y0 - pad);
  return { left, top, width: right - left, height: y1 + pad - top };
}

/**
 * Reads each run of unsure words again inside its rectangle (up to MAX_REREADS, the least sure
 * first) and puts the new words in place of the run's when they make one line read surer than
 * the run was and at UNSURE_BELOW or more. The page's lines are changed in place; the result is
 * how many runs were replaced. Only a read with its words' boxes (`blocks` output) is looked at.
 */
export async function rereadUnsure(page: Page, read: ReadRectangle): Promise<number> {
  const lines = pageLines(page) as unknown as Line[];
  if (!lines.every((line) => line.bbox && line.words.every((word) => word.bbox))) return 0;
  const runs = lines
    .flatMap((line) => unsureRuns(line).map((run) => ({ line, run, confidence: mean(run) })))
    .sort((a, b) => a.confidence - b.confidence)
    .slice(0, MAX_REREADS);
  let replaced = 0;
  for (const { line, run, confidence } of runs) {
    const again = pageLines(await read(around(run, line))) as unknown as Line[];
    const words = again.length === 1 ? again[0]!.words.filter((word) => word.text.trim()) : [];
    if (!words.length || mean(words) < UNSURE_BELOW || mean(words) <= confidence) continue;
    const at = line.words.indexOf(run[0]!);
    line.words.splice(at, run.length, ...words);
    replaced++;
  }
  return replaced;
}
