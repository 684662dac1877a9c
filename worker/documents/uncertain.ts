// Which extracted values OCR was unsure of: a value is looked up among the words OCR read (as it
// would be printed: 1234.5 as "1,234.50" or "1.234,50"), and the confidence of the words it was
// read from is the value's. Below UNSURE_BELOW the cell is marked for the user and named to the
// agent. A value the text does not hold (the agent inferred or corrected it) is not judged.
import type { CellValue } from '../../protocol/windows.ts';
import type { OcrWord } from './ocr.ts';

/** tesseract's word confidence under which a value is shown as uncertain. */
export const UNSURE_BELOW = 75;

/** A word as compared: without the currency signs and punctuation around it, lower-cased. */
function bare(text: string): string {
  return text
    .toLowerCase()
    .replace(/^[^\p{L}\p{N}]+/u, '')
    .replace(/[^\p{L}\p{N}]+$/u, '');
}

/** How a value may be printed, as lists of words. */
function printedForms(value: CellValue): string[][] {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const fixed = Math.abs(value).toFixed(Number.isInteger(value) ? 0 : 2);
    const [whole, cents] = fixed.split('.') as [string, string | undefined];
    const group = (separator: string) => whole.replace(/\B(?=(\d{3})+(?!\d))/g, separator);
    const sign = value < 0 ? '-' : '';
    const forms = cents === undefined ? [whole, group(','), group('.')] : [`${whole}.${cents}`, `${group(',')}.${cents}`, `${whole},${cents}`, `${group('.')},${cents}`];
    return [...new Set(forms)].map((form) => [bare(sign + form)]);
  }
  if (typeof value === 'string' && value.trim()) return [value.trim().split(/\s+/).map(bare).filter(Boolean)];
  return [];
}

/** Edit distance, up to `limit` (anything further is limit + 1). */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** Whether an OCR'd word reads as `wanted`: exactly, or (a long word) but for one character. */
function reads(word: string, wanted: string): boolean {
  if (word === wanted) return true;
  return wanted.length >= 5 && distance(word, wanted, 1) <= 1;
}

/**
 * The confidence (0..100) OCR had in the words `value` was read from: the least of its words'
 * where it was found, the best such reading when it is printed more than once. Null when the
 * words do not hold it.
 */
export function valueConfidence(value: CellValue, words: OcrWord[]): number | null {
  // Words of punctuation alone ("&", "-") are skipped on both sides.
  const read = words.map((word) => ({ text: bare(word.text), confidence: word.confidence })).filter((word) => word.text);
  let best: number | null = null;
  for (const form of printedForms(value)) {
    if (!form.length) continue;
    for (let i = 0; i + form.length <= read.length; i++) {
      if (!form.every((token, k) => reads(read[i + k]!.text, token))) continue;
      const confidence = Math.min(...read.slice(i, i + form.length).map((word) => word.confidence));
      best = best === null ? confidence : Math.max(best, confidence);
    }
  }
  return best;
}

/** The fields OCR was unsure of: field -> confidence, for values found among the words below UNSURE_BELOW. */
export function uncertainFields(fields: Record<string, CellValue>, words: OcrWord[]): Record<string, number> {
  const unsure: Record<string, number> = {};
  if (!words.length) return unsure;
  for (const [key, value] of Object.entries(fields)) {
    const confidence = valueConfidence(value, words);
    if (confidence !== null && confidence < UNSURE_BELOW) unsure[key] = confidence;
  }
  return unsure;
}
