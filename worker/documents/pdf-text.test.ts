import { readFileSync } from 'node:fs';
import { openPdfInNode as open } from './node-pdf.ts';
import { describe, expect, it } from 'vitest';
import { assemble, describeText, hasTextLayer, PdfReadError, readPdfText, scanScale } from './pdf-text.ts';
import { fixture as fixtureFile, formatAmount, invoices } from '../../tests/support/fixtures.ts';

const fixture = (name: string) => new Uint8Array(fixtureFile(name));
const truth = invoices();

describe('readPdfText', () => {
  it('reads the text layer of an invoice page by page, with progress', async () => {
    const pages: number[] = [];
    const text = await readPdfText(open, fixture('plain-1.pdf'), (page) => pages.push(page));
    expect(pages).toEqual(text.pages.map((_, i) => i + 1));
    expect(hasTextLayer(text)).toBe(true);
    expect(assemble(text)).toMatch(/^--- page 1 ---\n/);
    expect(describeText('plain-1.pdf', text)).toMatch(/^PDF "plain-1.pdf", 1 page/);
    const a1 = truth.find((entry) => entry.id === 'plain-1')!;
    expect(assemble(text)).toContain(a1.vendor);
    expect(assemble(text)).toContain(formatAmount(a1, a1.total));
  });

  it('reads every fixture PDF, in every layout, with its vendor, number and total in the text', async () => {
    expect(new Set(truth.map((entry) => entry.layout)).size).toBeGreaterThanOrEqual(5);
    for (const entry of truth) {
      const text = assemble(await readPdfText(open, fixture(`${entry.id}.pdf`)));
      expect(text, entry.id).toContain(entry.vendor);
      expect(text, entry.id).toContain(entry.invoice_number);
      expect(text, entry.id).toContain(formatAmount(entry, entry.total));
    }
  });

  it('says a password-protected PDF is one, and reads nothing from it', async () => {
    const locked = new Uint8Array(readFileSync(new URL('./fixtures/password-protected.pdf', import.meta.url)));
    const failure = readPdfText(open, locked);
    await expect(failure).rejects.toMatchObject({ code: 'encrypted' });
    await expect(readPdfText(open, locked)).rejects.toThrow('password-protected');
  });

  it('names a damaged file', async () => {
    const broken = fixture('plain-1.pdf').slice(0, 400);
    await expect(readPdfText(open, broken)).rejects.toBeInstanceOf(PdfReadError);
    await expect(readPdfText(open, new TextEncoder().encode('%PDF-1.7\nnot really'))).rejects.toMatchObject({ code: 'corrupt' });
  });
});

describe('scanScale', () => {
  it('draws a scanned page at its scan\'s resolution, between 144 and 216 dpi', () => {
    const letter = 612;
    expect(scanScale([{ width: 1275, height: 1650 }], letter)).toBeCloseTo(1275 / 612); // 150 dpi
    expect(scanScale([{ width: 2550, height: 3300 }], letter)).toBe(3); // 300 dpi: drawn at 216
    expect(scanScale([{ width: 1000, height: 1200 }], letter)).toBe(2); // 118 dpi: drawn at 144
    // A logo is not the scan; with no large image the page is drawn at 216 dpi.
    expect(scanScale([{ width: 300, height: 100 }], letter)).toBe(3);
    expect(scanScale([{ width: 300, height: 100 }, { width: 1275, height: 1650 }], letter)).toBeCloseTo(1275 / 612);
    expect(scanScale([], letter)).toBe(3);
  });
});
