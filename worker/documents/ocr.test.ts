import { describe, expect, it } from 'vitest';
import { fixture, formatAmount, invoices } from '../../tests/support/fixtures.ts';
import { createNodeOcr } from './node-ocr.ts';

const ocr = createNodeOcr();

describe('OCR (tesseract.js, offline English data)', () => {
  it('reads noisy, crooked invoice scans well enough to find each English vendor, number and total', async () => {
    try {
      // One of each English layout (the German ones need their own language data).
      const english = invoices().filter((entry) => entry.language === 'en' && entry.id.endsWith('-1'));
      expect(english.map((entry) => entry.layout)).toEqual(['plain', 'two-column', 'receipt', 'wrapped']);
      for (const entry of english) {
        const result = await ocr(new Uint8Array(fixture(entry.files.scan)));
        expect(result.text, entry.id).toContain(entry.vendor);
        expect(result.text, entry.id).toContain(formatAmount(entry, entry.total));
        expect(result.confidence, entry.id).toBeGreaterThan(60);
      }
    } finally {
      await ocr.terminate();
    }
  }, 120_000);
});
