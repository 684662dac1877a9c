import { readFileSync } from 'node:fs';
import { openPdfInNode as open } from './node-pdf.ts';
import { describe, expect, it } from 'vitest';
import { assemble, describeText, hasTextLayer, PdfReadError, readPdfText } from './pdf-text.ts';
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../../shared/fixtures/invoices/${name}`, import.meta.url)));
const truth = JSON.parse(readFileSync(new URL('../../../shared/fixtures/invoices/ground-truth.json', import.meta.url), 'utf8'));

describe('readPdfText', () => {
  it('reads the text layer of an invoice page by page, with progress', async () => {
    const pages: number[] = [];
    const text = await readPdfText(open, fixture('sample_A1.pdf'), (page) => pages.push(page));
    expect(pages).toEqual(text.pages.map((_, i) => i + 1));
    expect(hasTextLayer(text)).toBe(true);
    expect(assemble(text)).toMatch(/^--- page 1 ---\n/);
    expect(describeText('sample_A1.pdf', text)).toMatch(/^PDF "sample_A1.pdf", 1 page/);
    const a1 = truth.find((entry: { id: string }) => entry.id === 'sample_A1');
    expect(assemble(text)).toContain(a1.vendor);
    expect(assemble(text).replace(/,/g, '')).toContain(a1.total.toFixed(2));
  });

  it('reads every fixture PDF with its vendor and total in the text', async () => {
    for (const entry of truth as { id: string; vendor: string; total: number }[]) {
      const text = assemble(await readPdfText(open, fixture(`${entry.id}.pdf`)));
      expect(text, entry.id).toContain(entry.vendor);
      expect(text.replace(/,/g, ''), entry.id).toContain(entry.total.toFixed(2));
    }
  });

  it('says a password-protected PDF is one, and reads nothing from it', async () => {
    const locked = new Uint8Array(readFileSync(new URL('./fixtures/password-protected.pdf', import.meta.url)));
    const failure = readPdfText(open, locked);
    await expect(failure).rejects.toMatchObject({ code: 'encrypted' });
    await expect(readPdfText(open, locked)).rejects.toThrow('password-protected');
  });

  it('names a damaged file', async () => {
    const broken = fixture('sample_A1.pdf').slice(0, 400);
    await expect(readPdfText(open, broken)).rejects.toBeInstanceOf(PdfReadError);
    await expect(readPdfText(open, new TextEncoder().encode('%PDF-1.7\nnot really'))).rejects.toMatchObject({ code: 'corrupt' });
  });
});
