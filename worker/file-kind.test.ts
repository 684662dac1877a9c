import { describe, expect, it } from 'vitest';
import { sniffMime, SNIFF_BYTES, textEncoding } from './file-kind.ts';

const enc = (text: string) => new TextEncoder().encode(text);

describe('textEncoding', () => {
  it('takes UTF-8 and BOM-marked UTF-16 with ordinary whitespace as text', () => {
    expect(textEncoding(enc('Müller & Söhne\tGmbH\r\n1.234,56 €\f'))).toBe('utf-8');
    expect(textEncoding(new Uint8Array([0xfe, 0xff, 0, 0x41, 0, 0x42]))).toBe('utf-16be');
    expect(textEncoding(new Uint8Array([0xff, 0xfe, 0x41, 0, 0x42, 0]))).toBe('utf-16le');
  });

  it('refuses control characters and invalid sequences', () => {
    expect(textEncoding(new Uint8Array([0x61, 0x07, 0x62]))).toBeNull();
    expect(textEncoding(new Uint8Array([0x61, 0x00, 0x62]))).toBeNull();
    expect(textEncoding(enc('a\u001b[31mred'))).toBeNull();
    expect(textEncoding(new Uint8Array([0x61, 0xc3, 0x28]))).toBeNull();
    expect(textEncoding(new Uint8Array([0xff, 0xfe, 0x41]))).toBeNull(); // half a UTF-16 unit
  });

  it('lets a head end in the middle of a character, but not a whole file', () => {
    const cut = enc('Grüße').subarray(0, 3); // "Gr" and the first byte of "ü"
    expect(textEncoding(cut, false)).toBe('utf-8');
    expect(textEncoding(cut, true)).toBeNull();
  });
});

describe('sniffMime', () => {
  it('names formats by their signatures, Office files by what their ZIP holds', async () => {
    expect(await sniffMime(enc('%PDF-1.7\n%âãÏÓ'), 'x.bin')).toBe('application/pdf');
    expect(await sniffMime(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]), 'a')).toBe('image/png');
    expect(await sniffMime(new Uint8Array([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff]), 'setup.txt')).toBe('application/x-msdownload');
    expect(await sniffMime(new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), 'a.txt')).toBe('application/gzip');
  });

  it('names text by the file name only once the bytes are text', async () => {
    expect(await sniffMime(enc('a,b\n1,2'), 'data.csv')).toBe('text/csv');
    expect(await sniffMime(enc('# Plan'), 'plan.md')).toBe('text/markdown');
    expect(await sniffMime(enc('{"a":1}'), 'a.json')).toBe('application/json');
    expect(await sniffMime(enc('plain words'), 'a.pdf')).toBe('text/plain');
    expect(await sniffMime(new Uint8Array(64).fill(7), 'a.csv')).toBe('application/octet-stream');
  });

  it('reads no more than its sample and does not throw on damaged headers', async () => {
    const big = new Uint8Array(SNIFF_BYTES * 3).fill(0x61);
    big[SNIFF_BYTES + 10] = 0; // past the sample: not seen
    expect(await sniffMime(big, 'a.txt', false)).toBe('text/plain');
    const brokenZip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    await expect(sniffMime(brokenZip, 'a.xlsx')).resolves.toMatch(/^application\//);
  });
});
