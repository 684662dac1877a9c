import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeOcr } from './node-ocr.ts';

const ocr = createNodeOcr();
afterAll(() => ocr.terminate());
const truth = JSON.parse(readFileSync(new URL('../../../shared/fixtures/invoices/ground-truth.json', import.meta.url), 'utf8'));

describe('OCR (tesseract.js, offline English data)', () => {
  it('reads a noisy invoice scan well enough to find its vendor and total', async () => {
    const scan = new Uint8Array(readFileSync(new URL('../../../shared/fixtures/invoices/sample_B3_scan.jpg', import.meta.url)));
    const result = await ocr(scan);
    const b3 = truth.find((t: { id: string }) => t.id === 'sample_B3');
    expect(result.text).toContain(b3.vendor);
    expect(result.text.replace(/,/g, '')).toContain(b3.total.toFixed(2));
    expect(result.confidence).toBeGreaterThan(60);
  }, 60_000);
});
