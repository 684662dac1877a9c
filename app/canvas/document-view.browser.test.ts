// A document window's PDF pages and pictures, drawn in the document view worker and shown on the
// page's canvas.
import { PDFDocument, rgb } from 'pdf-lib';
import { afterEach, describe, expect, it } from 'vitest';
import { openPdf, openPicture, type PdfHandle } from './document-view.ts';

/** Two 200x100 pt pages: the first black on its left half, the second black on its right half. */
async function twoPages(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 100]).drawRectangle({ x: 0, y: 0, width: 100, height: 100, color: rgb(0, 0, 0) });
  doc.addPage([200, 100]).drawRectangle({ x: 100, y: 0, width: 100, height: 100, color: rgb(0, 0, 0) });
  return doc.save();
}

/** The grey level at (x, y) of what the canvas shows, in CSS pixels of a `wide` picture at scale 1. */
function shade(canvas: HTMLCanvasElement, x: number, y: number, wide = 200): number {
  const copy = new OffscreenCanvas(canvas.width, canvas.height);
  const context = copy.getContext('2d')!;
  context.drawImage(canvas, 0, 0);
  const ratio = canvas.width / wide;
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

/** A 400x200 PNG, black on its left half. */
async function halfBlack(): Promise<Blob> {
  const canvas = new OffscreenCanvas(400, 200);
  const context = canvas.getContext('2d')!;
  context.fillStyle = '#fff';
  context.fillRect(0, 0, 400, 200);
  context.fillStyle = '#000';
  context.fillRect(0, 0, 200, 200);
  return canvas.convertToBlob({ type: 'image/png' });
}

describe('openPicture', () => {
  it('draws a picture scaled in the worker to the width shown, times the device pixel ratio', async () => {
    const picture = openPicture(await halfBlack());
    const canvas = document.body.appendChild(document.createElement('canvas'));
    await picture.render(100, canvas);
    expect(canvas.width).toBe(Math.round(100 * devicePixelRatio));
    expect(canvas.height).toBe(Math.round(50 * devicePixelRatio));
    expect(canvas.style.width).toBe('100px');
    expect(shade(canvas, 20, 25, 100)).toBeLessThan(30);
    expect(shade(canvas, 80, 25, 100)).toBeGreaterThan(225);
    picture.destroy();
  });

  it('never holds more pixels than the picture has: shown wider, the browser scales it', async () => {
    const picture = openPicture(await halfBlack());
    const canvas = document.body.appendChild(document.createElement('canvas'));
    await picture.render(1200, canvas);
    expect([canvas.width, canvas.height]).toEqual([400, 200]);
    expect(canvas.style.width).toBe('1200px');
    picture.destroy();
  });

  it("rejects a picture the browser cannot decode with the browser's reason", async () => {
    const picture = openPicture(new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])], { type: 'image/png' }));
    const canvas = document.body.appendChild(document.createElement('canvas'));
    await expect(picture.render(100, canvas)).rejects.toThrow(/decode|source image/i);
    picture.destroy();
  });
});
