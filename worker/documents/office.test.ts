import { strToU8, zipSync } from 'fflate';
import UTIF from 'utif2';
import { describe, expect, it } from 'vitest';
import { OFFICE_FILES, REPORT_MARKDOWN, TIFF_PAGES, WORKBOOK_SHEETS } from '../../tests/fixtures/office.ts';
import { fixture } from '../../tests/support/fixtures.ts';
import { isEncryptedOffice } from '../file-kind.ts';
import { htmlToMarkdown, OfficeReadError, readDocx, readTiffPages, readWorkbook } from './office.ts';

describe('Excel workbooks', () => {
  it('reads every sheet, its cells typed, dates as ISO dates, accents intact', async () => {
    const sheets = await readWorkbook(fixture(OFFICE_FILES.workbook));
    expect(sheets).toEqual(WORKBOOK_SHEETS.map((sheet) => ({ name: sheet.name, rows: sheet.rows.map((row) => [...row]) })));
  });

  it('tells a password-protected workbook by its bytes', () => {
    expect(isEncryptedOffice(fixture(OFFICE_FILES.encrypted))).toBe(true);
    expect(isEncryptedOffice(fixture(OFFICE_FILES.workbook))).toBe(false);
  });

  it('refuses a damaged workbook, saying so', async () => {
    const damaged = zipSync({ '[Content_Types].xml': strToU8('<Types/>'), 'xl/workbook.xml': strToU8('<not-a-workbook') });
    await expect(readWorkbook(damaged)).rejects.toThrow(OfficeReadError);
    await expect(readWorkbook(damaged)).rejects.toThrow(/is not a workbook that can be read/);
  });
});

describe('Word documents', () => {
  it('reads headings, bold text, a table and a list as markdown', async () => {
    const { text } = await readDocx(fixture(OFFICE_FILES.report));
    expect(text.trim().split('\n\n')).toEqual(REPORT_MARKDOWN);
  });

  it('folds nested lists and entities', () => {
    expect(htmlToMarkdown('<ol><li>one</li><li>two<ul><li>inner &amp; more</li></ul></li></ol><p>a&lt;b&#8364;</p>')).toBe('1. one\n\n2. two\n\n  - inner & more\n\na<b€\n');
  });

  it('refuses a file that is not a Word document inside', async () => {
    await expect(readDocx(zipSync({ 'hello.txt': strToU8('hi') }))).rejects.toThrow(/is not a Word document that can be read/);
  });
});

describe('TIFF scans', () => {
  it('hands each page to the reader as a PNG, in order', async () => {
    const seen: [number, number, number][] = [];
    const pages = await readTiffPages(fixture(OFFICE_FILES.tiff), async (page, total, png) => {
      expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
      seen.push([page, total, png.length]);
    });
    expect(pages).toBe(TIFF_PAGES);
    expect(seen.map(([page, total]) => [page, total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it('refuses a page larger than 50 megapixels before decoding it', async () => {
    const huge = new Uint8Array(UTIF.encode([{ t256: [10_000], t257: [6_000], t258: [8], t259: [1], t262: [1], t273: [8], t277: [1], t278: [6_000], t279: [60_000_000] }] as never));
    await expect(readTiffPages(huge, async () => {})).rejects.toThrow('page 1 is 10000×6000 pixels; pages up to 50 megapixels can be read');
  });

  it('refuses bytes that are not a TIFF', async () => {
    await expect(readTiffPages(strToU8('MM\u0000*garbage'), async () => {})).rejects.toThrow(OfficeReadError);
  });
});
