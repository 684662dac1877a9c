import { describe, expect, it } from 'vitest';
import { checkUpload, MAX_UPLOAD_BYTES, safeFileName, uniqueName } from './upload.ts';
import { fixture } from '../../tests/support/fixtures.ts';

const enc = (text: string) => new TextEncoder().encode(text);
const pdf = enc('%PDF-1.7\n...');

describe('checkUpload', () => {
  it('accepts supported types told by their bytes', () => {
    expect(checkUpload('invoice.pdf', pdf)).toEqual({ name: 'invoice.pdf', mime: 'application/pdf' });
    expect(checkUpload('scan.jpg', new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2]))).toEqual({ name: 'scan.jpg', mime: 'image/jpeg' });
    expect(checkUpload('notes.txt', enc('hello'))).toEqual({ name: 'notes.txt', mime: 'text/plain' });
    expect(checkUpload('data.csv', enc('a,b\n1,2'))).toEqual({ name: 'data.csv', mime: 'text/csv' });
  });

  it('refuses each bad input with a specific message', () => {
    expect(() => checkUpload('empty.pdf', new Uint8Array())).toThrow('empty.pdf is empty (0 bytes)');
    expect(() => checkUpload('huge.pdf', new Uint8Array(MAX_UPLOAD_BYTES + 1))).toThrow('huge.pdf is 25.0 MB; the limit is 25 MB per file.');
    expect(() => checkUpload('big.pdf', new Uint8Array(30 * 1024 * 1024))).toThrow('big.pdf is 30.0 MB');
    expect(() => checkUpload('fake.pdf', enc('just some text'))).toThrow('fake.pdf is named like a PDF, but its contents are not (text)');
    expect(() => checkUpload('blob.bin', new Uint8Array([0, 1, 2, 3]))).toThrow('binary data of an unknown kind, which cannot be read here');
  });

  it('keeps only a safe last path segment as the name', () => {
    expect(safeFileName('../../x.pdf')).toBe('x.pdf');
    expect(safeFileName('C:\\\\Users\\\\me\\\\scan.png')).toBe('scan.png');
    expect(safeFileName('.hidden')).toBe('hidden');
    expect(safeFileName('bad\u0000name\n.pdf')).toBe('badname.pdf');
    expect(safeFileName('../')).toBe('file');
    expect(checkUpload('../../x.pdf', pdf).name).toBe('x.pdf');
  });

  it('numbers a name that is taken', () => {
    const taken = new Set(['invoice.pdf', 'invoice (2).pdf']);
    expect(uniqueName('invoice.pdf', (n) => taken.has(n))).toBe('invoice (3).pdf');
    expect(uniqueName('README', () => false)).toBe('README');
  });

  it('refuses an image too large to decode, from its header alone', () => {
    // A PNG header claiming 30000 x 30000 pixels.
    const png = new Uint8Array(33);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    new DataView(png.buffer).setUint32(16, 30_000);
    new DataView(png.buffer).setUint32(20, 30_000);
    expect(() => checkUpload('huge.png', png)).toThrow('huge.png is 30000×30000 pixels; images up to 50 megapixels can be read.');
    new DataView(png.buffer).setUint32(16, 2_000);
    new DataView(png.buffer).setUint32(20, 3_000);
    expect(checkUpload('fine.png', png).mime).toBe('image/png');
  });
});

describe('imageSize', () => {
  it('reads a JPEG fixture scan\'s size from its header', async () => {
    const { imageSize } = await import('./image-size.ts');
    const jpeg = new Uint8Array(fixture('plain-1_scan.jpg'));
    const size = imageSize(jpeg, 'image/jpeg');
    expect(size!.width).toBeGreaterThan(500);
    expect(size!.height).toBeGreaterThan(500);
  });
});
