import { describe, expect, it } from 'vitest';
import { SMUDGED } from '../../tests/fixtures/generate.ts';
import { fixture, invoice } from '../../tests/support/fixtures.ts';
import { createNodeOcr } from './node-ocr.ts';
import { uncertainFields, valueConfidence } from './uncertain.ts';

const words = (line: string, confidence: Record<string, number> = {}) => line.split(' ').map((text) => ({ text, confidence: confidence[text] ?? 96 }));

describe('valueConfidence', () => {
  it('finds an amount however it is printed, and names the confidence of its words', () => {
    expect(valueConfidence(1234.5, words('Total $1,234.50', { '$1,234.50': 61 }))).toBe(61);
    expect(valueConfidence(1234.5, words('Gesamt 1.234,50 €', { '1.234,50': 58 }))).toBe(58);
    expect(valueConfidence(-12, words('credit -12', { '-12': 70 }))).toBe(70);
  });

  it('takes the best reading of a value printed twice, and the least sure word of a name', () => {
    expect(valueConfidence(99.9, words('99.90 and 99.90', { '99.90': 40 }))).toBe(40);
    expect(valueConfidence(99.9, [{ text: '99.90', confidence: 40 }, { text: '$99.90', confidence: 92 }])).toBe(92);
    expect(valueConfidence('Müller & Söhne GmbH', words('Von Müller & Söhne GmbH, Berlin', { 'Söhne': 52 }))).toBe(52);
  });

  it('allows one misread character in a long value, and says nothing of values the text does not hold', () => {
    expect(valueConfidence(3366.32, words('Total 336632', { '336632': 17 }))).toBe(17);
    expect(valueConfidence(12.5, words('Total 12.6'))).toBeNull();
    expect(valueConfidence('NORTHWIND TRADERS', words('Harbour City Plumbing'))).toBeNull();
  });

  it('marks only the fields below the line', () => {
    expect(uncertainFields({ vendor: 'Acme Pty', total: 10.5, note: null }, words('Acme Pty total 10.50', { Pty: 90, '10.50': 40 }))).toEqual({ total: 40 });
    expect(uncertainFields({ total: 10.5 }, [])).toEqual({});
  });

  it('the smudged fixture scan: OCR is unsure of the total under the blot, and sure of the rest', { timeout: 60_000 }, async () => {
    const ocr = createNodeOcr();
    try {
      const expected = invoice(SMUDGED.invoice);
      const { words: read } = await ocr(new Uint8Array(fixture(SMUDGED.file)));
      expect(Object.keys(uncertainFields({ vendor: expected.vendor, invoice_number: expected.invoice_number, total: expected.total }, read!))).toEqual(['total']);
    } finally {
      await ocr.terminate();
    }
  });
});
