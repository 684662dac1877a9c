import { describe, expect, it } from 'vitest';
import { appendOutput, emptyOutput, HEAD_CHARS, outputText, TAIL_CHARS } from './tool-output.ts';

describe('appendOutput', () => {
  it('keeps short output whole, in order', () => {
    const out = ['a\n', 'b', 'c\n', ''].reduce(appendOutput, emptyOutput);
    expect(outputText(out)).toBe('a\nbc\n');
    expect(out.omitted).toBe(0);
  });

  it('ends the head at a line break and goes on in the tail', () => {
    const first = 'x'.repeat(HEAD_CHARS - 10) + '\n';
    const out = appendOutput(appendOutput(emptyOutput, first), 'more than ten characters\nand on');
    expect(out.head).toBe(first);
    expect(out.tail).toBe('more than ten characters\nand on');
    expect(outputText(out)).toBe(first + 'more than ten characters\nand on');
  });

  it('cuts a head with no line break at its size', () => {
    const out = appendOutput(emptyOutput, 'y'.repeat(HEAD_CHARS + 5));
    expect(out.head).toHaveLength(HEAD_CHARS);
    expect(out.tail).toBe('yyyyy');
  });

  it('drops from the middle, counting what it dropped, and starts the tail on a line', () => {
    let out = emptyOutput;
    let total = 0;
    for (let i = 0; i < 5_000; i++) {
      const text = `row ${i} ${'-'.repeat(40)}\n`;
      total += text.length;
      out = appendOutput(out, text);
    }
    expect(out.tail.length).toBeLessThanOrEqual(TAIL_CHARS);
    expect(out.head.length + out.omitted + out.tail.length).toBe(total);
    expect(out.head.startsWith('row 0 ')).toBe(true);
    expect(out.tail.startsWith('row ')).toBe(true);
    expect(out.tail.endsWith(`row 4999 ${'-'.repeat(40)}\n`)).toBe(true);
    expect(outputText(out)).toContain(`… ${Math.round(out.omitted / 1024)} KB not shown …\nrow `);
  });

  it('one huge chunk still leaves only the head and the last 64 KB', () => {
    const out = appendOutput(emptyOutput, 'z'.repeat(1_000_000));
    expect(out.head.length).toBe(HEAD_CHARS);
    expect(out.tail.length).toBe(TAIL_CHARS);
    expect(out.omitted).toBe(1_000_000 - HEAD_CHARS - TAIL_CHARS);
  });
});
