// A document window's PDF pages, drawn in the PDF view worker and shown on the page's canvas.
import { PDFDocument, rgb } from 'pdf-lib';
import { afterEach, describe, expect, it } from 'vitest';
import { openPdf, type PdfHandle } from './pdf.ts';

/** Two 200x100 pt pages: the first black on its left half, the second black on its right half. */
async function twoPages(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 100]).drawRectangle({ x: 0, y: 0, width: 100, height: 100, color: rgb(0, 0, 0) });
  doc.addPage([200, 100]).drawRectangle({ x: 100, y: 0, width: 100, height: 100, color: rgb(0, 0, 0) });
  return doc.save();
}

/** The grey level at (x, y) of what the canvas shows, in CSS pixels of the page at scale 1. */
function shade(canvas: HTMLCanvasElement, x: number, y: number): number {
  const copy = new OffscreenCanvas(canvas.width, canvas.height);
  const context = copy.getContext('2d')!;
  context.drawImage(canvas, 0, 0);
  const ratio = canvas.width / 200;
  return context.getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data[0]!;
}

const opened: PdfHandle[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((pdf) => pdf.destroy()));
  document.body.replaceChildren();
});

describe('openPdf', () => {
  it('draws a page in the worker and shows it on the canvas at the device pixel ratio', async () => {
    const pdf = await openPdf(await twoPages());
    opened.push(pdf);
    expect(pdf.pages).toBe(2);
    expect(await pdf.pageWidth(1)).toBe(200);
    const canvas = document.body.appendChild(document.createElement('canvas'));
    await pdf.render(1, 1.5, canvas);
    expect(canvas.width).toBe(Math.ceil(300 * devicePixelRatio));
    expect(canvas.style.width).toBe(`${canvas.width / devicePixelRatio}px`);
    expect(shade(canvas, 50, 50)).toBeLessThan(30);
    expect(shade(canvas, 150, 50)).toBeGreaterThan(225);
  });

  it('a later drawing for the same canvas replaces one still under way, which ends quietly', async () => {
    const pdf = await openPdf(await twoPages());
    opened.push(pdf);
    const canvas = document.body.appendChild(document.createElement('canvas'));
    const first = pdf.render(1, 4, canvas);
    const second = pdf.render(2, 1, canvas);
    await Promise.all([first, second]);
    // Page 2 (black on the right) is what shows, at scale 1.
    expect(canvas.width).toBe(Math.ceil(200 * devicePixelRatio));
    expect(shade(canvas, 50, 50)).toBeGreaterThan(225);
    expect(shade(canvas, 150, 50)).toBeLessThan(30);
  });

  it("rejects a damaged file with pdfjs's reason, and leaves the caller's bytes alone when they are part of a larger buffer", async () => {
    const whole = await twoPages();
    const torn = new Uint8Array(whole.buffer, 0, 300);
    await expect(openPdf(torn)).rejects.toMatchObject({ name: 'InvalidPDFException' });
    expect(torn.byteLength).toBe(300);
    expect(new TextDecoder().decode(whole.subarray(0, 5))).toBe('%PDF-');
  });

  it('a window closed is let go: its pages can no longer be drawn', async () => {
    const pdf = await openPdf(await twoPages());
    await pdf.destroy();
    await expect(pdf.pageWidth(1)).rejects.toThrow(/not open/);
  });
});
