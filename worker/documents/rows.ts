// Table rows whose description wraps onto a second line: tesseract reads such a row as two lines,
// "Retaining wall repair (sandstone blocks, 0.6 m high)   5   676.99   3,384.95" and then
// "including removal of old mortar", which splits the description by the amounts. From the
// words' boxes, a line that only continues the description column of a row with an amount at its
// end is put back into that row, before its amounts.

export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface RowWord {
  text: string;
  bbox: Box;
}

export interface RowLine {
  words: RowWord[];
  bbox: Box;
}

/** A sum of money as printed: digits with two decimals, a currency sign or minus before them. */
const MONEY = /^[-(]?[$£€¥]?\d[\d,. ]*[.,]\d{2}\)?$/;

/** Where a row's description ends: the first gap between words as wide as 1.5 line heights. */
function columnGap(line: RowLine, height: number): number {
  for (let i = 1; i < line.words.length; i++) {
    if (line.words[i]!.bbox.x0 - line.words[i - 1]!.bbox.x1 >= 1.5 * height) return i;
  }
  return -1;
}

/**
 * The lines with each wrapped row made one again; null when no line continues a row. A line
 * continues the row above when it lies right under it (less than 0.8 line heights apart), starts
 * where the row's description starts, and has nothing past where the row's amounts begin but a
 * speck or two (one or two characters, no digit); the row ends in a sum of money after a column
 * gap.
 */
export function joinWrappedRows(lines: RowLine[]): RowLine[] | null {
  // Only from a read with its boxes (tesseract's `blocks` output has them).
  if (!lines.every((line) => line.bbox && line.words.every((word) => word.bbox))) return null;
  const out: RowLine[] = [];
  let joined = false;
  for (let i = 0; i < lines.length; i++) {
    const row = lines[i]!;
    const height = row.bbox.y1 - row.bbox.y0;
    const gap = height > 0 ? columnGap(row, height) : -1;
    if (gap <= 0 || !MONEY.test(row.words.at(-1)!.text)) {
      out.push(row);
      continue;
    }
    const description = row.words.slice(0, gap);
    const rest = row.words.slice(gap);
    const columnStart = rest[0]!.bbox.x0;
    const left = description[0]!.bbox.x0;
    let bottom = row.bbox.y1;
    const more: RowWord[] = [];
    while (i + 1 < lines.length) {
      const next = lines[i + 1]!;
      if (!next.words.length || next.bbox.y0 - bottom >= 0.8 * height || Math.abs(next.words[0]!.bbox.x0 - left) >= 1.5 * height) break;
      const inside = next.words.filter((word) => word.bbox.x1 <= columnStart);
      const outside = next.words.filter((word) => word.bbox.x1 > columnStart);
      const speck = (word: RowWord) => word.text.length <= 2 && !/\d/.test(word.text);
      if (!inside.some((word) => /\p{L}{2}/u.test(word.text)) || inside.some((word) => MONEY.test(word.text)) || !outside.every(speck)) break;
      more.push(...inside);
      bottom = next.bbox.y1;
      i++;
    }
    if (!more.length) {
      out.push(row);
      continue;
    }
    joined = true;
    out.push({ words: [...description, ...more, ...rest], bbox: { ...row.bbox, y1: bottom } });
  }
  return joined ? out : null;
}
