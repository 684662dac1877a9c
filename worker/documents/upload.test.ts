import { describe, expect, it } from 'vitest';
import { checkUpload, MAX_UPLOAD_BYTES, safeFileName, uniqueName } from './upload.ts';
import { fixture } from '../../tests/support/fixtures.ts';
import { OFFICE_FILES } from '../../tests/fixtures/office.ts';

const enc = (text: string) => new TextEncoder().encode(text);
const pdf = enc('%PDF-1.7\n...');

describe('checkUpload', () => {
  it('takes Word documents and TIFF scans, and refuses a password-protected workbook saying so', async () => {
    await expect(checkUpload('report.docx', fixture(OFFICE_FILES.report))).resolves.toEqual({ name: 'report.docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
    await expect(checkUpload('scan.tif', fixture(OFFICE_FILES.tiff))).resolves.toEqual({ name: 'scan.tif', mime: 'image/tiff' });
    await expect(checkUpload('budget.xlsx', fixture(OFFICE_FILES.encrypted))).rejects.toThrow(
      'budget.xlsx is password-protected (encrypted), so it cannot be read here. Open it in Excel or Word, remove the password',
    );
  });

  it('accepts supported types told by their bytes', async () => {
    expect(await checkUpload('invoice.pdf', pdf)).toEqual({ name: 'invoice.pdf', mime: 'application/pdf' });
    expect(await checkUpload('scan.jpg', new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2]))).toEqual({ name: 'scan.jpg', mime: 'image/jpeg' });
    expect(await checkUpload('notes.txt', enc('hello'))).toEqual({ name: 'notes.txt', mime: 'text/plain' });
    expect(await checkUpload('data.csv', enc('a,b\n1,2'))).toEqual({ name: 'data.csv', mime: 'text/csv' });
    expect(await checkUpload('scan.jpeg', fixture('plain-1_scan.jpg'))).toEqual({ name: 'scan.jpeg', mime: 'image/jpeg' });
  });

  it('refuses each bad input with a specific message', async () => {
    await expect(checkUpload('empty.pdf', new Uint8Array())).rejects.toThrow('empty.pdf is empty (0 bytes)');
    await expect(checkUpload('huge.pdf', new Uint8Array(MAX_UPLOAD_BYTES + 1))).rejects.toThrow('huge.pdf is 25.0 MB; the limit is 25 MB per file.');
    await expect(checkUpload('big.pdf', new Uint8Array(30 * 1024 * 1024))).rejects.toThrow('big.pdf is 30.0 MB');
    await expect(checkUpload('fake.pdf', enc('just some text'))).rejects.toThrow('fake.pdf is named like a PDF, but its contents are not (text)');
    await expect(checkUpload('blob.bin', new Uint8Array([0, 1, 2, 3]))).rejects.toThrow('binary data of an unknown kind, which cannot be read here');
  });

  it('never takes binary bytes for text, whatever the name says', async () => {
    // Bell characters are valid UTF-8 but no text anyone writes.
    await expect(checkUpload('notes.exe', new Uint8Array(200).fill(0x07))).rejects.toThrow('notes.exe is binary data of an unknown kind');
    await expect(checkUpload('notes.txt', new Uint8Array(200).fill(0x07))).rejects.toThrow('notes.txt is named like text, but its contents are not (binary data of an unknown kind)');
    const elf = new Uint8Array(256);
    elf.set([0x7f, 0x45, 0x4c, 0x46, 1, 1, 1, 0]);
    await expect(checkUpload('readme.txt', elf)).rejects.toThrow('readme.txt is named like text, but its contents are not (a Linux program)');
    await expect(checkUpload('invoice.pdf', elf)).rejects.toThrow('invoice.pdf is named like a PDF, but its contents are not (a Linux program)');
    await expect(checkUpload('bad.txt', new Uint8Array([0x68, 0x69, 0xc3, 0x28]))).rejects.toThrow('bad.txt is named like text');
  });

  it('reads UTF-16 text with its byte-order mark, and letters that look like a signature as text', async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...[...'Grüße'].flatMap((c) => [c.charCodeAt(0), 0])]);
    expect(await checkUpload('gruss.txt', utf16)).toEqual({ name: 'gruss.txt', mime: 'text/plain' });
    expect(await checkUpload('cars.txt', enc('BMW 320d, 2019\nID3 tag notes'))).toEqual({ name: 'cars.txt', mime: 'text/plain' });
  });

  it('keeps only a safe last path segment as the name', async () => {
    expect(safeFileName('../../x.pdf')).toBe('x.pdf');
    expect(safeFileName('C:\\\\Users\\\\me\\\\scan.png')).toBe('scan.png');
    expect(safeFileName('.hidden')).toBe('hidden');
    expect(safeFileName('bad\u0000name\n.pdf')).toBe('badname.pdf');
    expect(safeFileName('../')).toBe('file');
    expect(safeFileName('invoice\u202Efdp.exe')).toBe('invoicefdp.exe');
    expect(safeFileName('a\ud800b.txt')).toBe('a\ufffdb.txt');
    expect((await checkUpload('../../x.pdf', pdf)).name).toBe('x.pdf');
  });

  it('numbers a name that is taken', () => {
    const taken = new Set(['invoice.pdf', 'invoice (2).pdf']);
    expect(uniqueName('invoice.pdf', (n) => taken.has(n))).toBe('invoice (3).pdf');
    expect(uniqueName('README', () => false)).toBe('README');
  });

  it('refuses an image too large to decode, from its header alone', async () => {
    // A PNG header claiming 30000 x 30000 pixels.
    const png = new Uint8Array(33);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    new DataView(png.buffer).setUint32(16, 30_000);
    new DataView(png.buffer).setUint32(20, 30_000);
    await expect(checkUpload('huge.png', png)).rejects.toThrow('huge.png is 30000×30000 pixels; images up to 50 megapixels can be read.');
    new DataView(png.buffer).setUint32(16, 2_000);
    new DataView(png.buffer).setUint32(20, 3_000);
    expect((await checkUpload('fine.png', png)).mime).toBe('image/png');
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
