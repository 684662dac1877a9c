import { describe, expect, it } from 'vitest';
import { joinWrappedRows, type RowLine } from './rows.ts';

/** A line of words at `y` (20 px high), each word placed at its x, 10 px a character. */
function line(y: number, ...words: [number, string][]): RowLine {
  const placed = words.map(([x, text]) => ({ text, bbox: { x0: x, y0: y, x1: x + text.length * 10, y1: y + 20 } }));
  return { words: placed, bbox: { x0: placed[0]!.bbox.x0, y0: y, x1: placed.at(-1)!.bbox.x1, y1: y + 20 } };
}
const text = (lines: RowLine[] | null) => lines?.map((l) => l.words.map((w) => w.text).join(' '));

describe('joinWrappedRows', () => {
  const row = line(100, [50, 'Retaining'], [150, 'wall'], [200, 'repair'], [400, '5'], [480, '676.99'], [600, '3,384.95']);

  it('puts a description that wrapped back into its row, before the amounts, leaving specks out', () => {
    const joined = joinWrappedRows([row, line(124, [50, 'including'], [150, 'old'], [190, 'mortar'], [520, 'i']), line(150, [50, 'Subtotal'], [600, '3,384.95'])]);
    expect(text(joined)).toEqual(['Retaining wall repair including old mortar 5 676.99 3,384.95', 'Subtotal 3,384.95']);
  });

  it('joins a description wrapped over two lines', () => {
    expect(text(joinWrappedRows([row, line(124, [50, 'including']), line(148, [50, 'removal'])]))).toEqual(['Retaining wall repair including removal 5 676.99 3,384.95']);
  });

  it('leaves lines that do not continue a row as they are', () => {
    // Far below (a footer), not where the description starts, with a number past the column, or
    // after a line with no sum of money at its end or no column gap.
    expect(joinWrappedRows([row, line(150, [50, 'Thank'], [110, 'you'])])).toBeNull();
    expect(joinWrappedRows([row, line(124, [90, 'including'])])).toBeNull();
    expect(joinWrappedRows([row, line(124, [50, 'including'], [480, '12'])])).toBeNull();
    expect(joinWrappedRows([line(100, [50, 'ABN'], [90, '33'], [400, '602'], [440, '118']), line(124, [50, 'Tax'], [90, 'Invoice'])])).toBeNull();
    expect(joinWrappedRows([line(100, [50, 'Total'], [110, 'due'], [150, '$5,214.78']), line(124, [50, 'Thank'], [110, 'you'])])).toBeNull();
  });
});
