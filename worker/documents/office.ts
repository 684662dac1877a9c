// Office files and TIFF scans, read in the worker with maintained libraries: an Excel workbook's
// sheets as rows (read-excel-file), a Word document as markdown text with its headings and tables
// (mammoth's HTML, folded to markdown here), and a TIFF's pages as PNGs for OCR (utif2, fast-png).
// Each has limits that keep a hostile file from taking the tab's memory, and each failure says
// what is wrong with the file in words a user can act on.
import { unzipSync } from 'fflate';
import type UTIF from 'utif2';
import { MAX_IMAGE_PIXELS } from './upload.ts';

/** A workbook larger than this (all sheets' cells) is refused rather than read. */
export const MAX_SHEET_CELLS = 2_000_000;
export const MAX_SHEETS = 100;
/** The same page limit as a PDF's. */
export const MAX_TIFF_PAGES = 1000;

/** What an Office file's parts may inflate to, in all (a workbook of 2 million cells is far less). */
export const MAX_OFFICE_INFLATED = 150 * 1024 * 1024;

export class OfficeReadError extends Error {}

/**
 * Refuses a ZIP-based Office file whose parts would inflate past MAX_OFFICE_INFLATED, from the
 * sizes its directory declares, before a library inflates anything.
 */
async function checkInflatedSize(bytes: Uint8Array): Promise<void> {
  let total = 0;
  try {
    unzipSync(bytes, {
      filter(file) {
        total += file.originalSize;
        return false;
      },
    });
  } catch (error) {
    throw new OfficeReadError(`is damaged: its ZIP structure cannot be read (${reason(error)})`);
  }
  if (total > MAX_OFFICE_INFLATED) {
    throw new OfficeReadError(`inflates to ${Math.round(total / 1024 / 1024)} MB; Office files up to ${MAX_OFFICE_INFLATED / 1024 / 1024} MB unpacked are read here`);
  }
}

export type SheetCell = string | number | boolean | null;

export interface Sheet {
  name: string;
  rows: SheetCell[][];
}

/** Every sheet of an .xlsx, its cells as strings, numbers and booleans (dates as ISO dates). */
export async function readWorkbook(bytes: Uint8Array): Promise<Sheet[]> {
  await checkInflatedSize(bytes);
  const { default: readXlsxFile } = await import('read-excel-file/universal');
  let sheets: { sheet: string; data: unknown[][] }[];
  try {
    sheets = (await readXlsxFile(ownBuffer(bytes))) as { sheet: string; data: unknown[][] }[];
  } catch (error) {
    throw new OfficeReadError(`is not a workbook that can be read (${reason(error)}). Open it in Excel or LibreOffice and save it again as .xlsx`);
  }
  if (sheets.length > MAX_SHEETS) throw new OfficeReadError(`has ${sheets.length} sheets; workbooks up to ${MAX_SHEETS} sheets are read here`);
  const cells = sheets.reduce((sum, sheet) => sum + sheet.data.reduce((n, row) => n + row.length, 0), 0);
  if (cells > MAX_SHEET_CELLS) throw new OfficeReadError(`has ${cells.toLocaleString('en')} cells; workbooks up to ${MAX_SHEET_CELLS.toLocaleString('en')} cells are read here. Split it and upload the parts`);
  return sheets.map(({ sheet, data }) => ({ name: sheet, rows: trimRows(data.map((row) => row.map(cellOf))) }));
}

function cellOf(value: unknown): SheetCell {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString().replace(/T00:00:00\.000Z$/, '');
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}

/** Without the empty rows and columns at the ends (formatting often stretches a sheet's range). */
function trimRows(rows: SheetCell[][]): SheetCell[][] {
  const filled = (cell: SheetCell) => cell !== null && cell !== '';
  let last = rows.length;
  while (last > 0 && !rows[last - 1]!.some(filled)) last--;
  const kept = rows.slice(0, last);
  const width = Math.max(0, ...kept.map((row) => row.findLastIndex(filled) + 1));
  return kept.map((row) => Array.from({ length: width }, (_, i) => row[i] ?? null));
}

/** A Word document as markdown: headings, paragraphs, lists and tables. */
export async function readDocx(bytes: Uint8Array): Promise<{ text: string; warnings: string[] }> {
  await checkInflatedSize(bytes);
  const mammoth = await import('mammoth');
  let html: string;
  let messages: { type: string; message: string }[];
  try {
    // Node's build of mammoth reads a Buffer, the browser's an ArrayBuffer.
    const input = typeof Buffer === 'undefined' ? { arrayBuffer: ownBuffer(bytes) } : { buffer: Buffer.from(bytes) };
    ({ value: html, messages } = await mammoth.convertToHtml(input as { arrayBuffer: ArrayBuffer }));
  } catch (error) {
    throw new OfficeReadError(`is not a Word document that can be read (${reason(error)}). Open it in Word or LibreOffice and save it again as .docx`);
  }
  return { text: htmlToMarkdown(html), warnings: messages.filter((m) => m.type === 'error').map((m) => m.message) };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') return String.fromCodePoint(name[1]?.toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/**
 * mammoth's HTML (a small, well-formed set: h1-h6, p, strong, em, a, ul/ol/li, table/tr/td/th,
 * br, img) as markdown. Not a general HTML converter: only what mammoth writes.
 */
export function htmlToMarkdown(html: string): string {
  const blocks: string[] = [];
  let line = '';
  let table: string[][] | null = null;
  let row: string[] | null = null;
  let cell: string | null = null;
  const lists: ('ul' | 'ol')[] = [];
  const counters: number[] = [];
  const write = (text: string) => {
    if (cell !== null) cell += text;
    else line += text;
  };
  const endBlock = () => {
    // A nested list item keeps its indent; everything else is one line of single spaces.
    const indent = /^ */.exec(line)![0];
    const text = line.replace(/[ \t]+/g, ' ').trim();
    if (text) blocks.push(indent + text);
    line = '';
  };
  for (const token of html.split(/(<[^>]+>)/)) {
    const tag = /^<(\/?)([a-z0-9]+)/i.exec(token);
    if (!tag) {
      write(decodeEntities(token));
      continue;
    }
    const closing = tag[1] === '/';
    const name = tag[2]!.toLowerCase();
    if (/^h[1-6]$/.test(name)) {
      if (closing) endBlock();
      else if (cell === null) line = `${'#'.repeat(Number(name[1]))} `;
    } else if (name === 'p') {
      if (cell !== null) {
        if (closing) cell += ' ';
      } else if (closing) endBlock();
    } else if (name === 'br') write(cell !== null ? ' ' : '\n');
    else if (name === 'strong' || name === 'b') write('**');
    else if (name === 'em' || name === 'i') write('_');
    else if (name === 'ul' || name === 'ol') {
      if (closing) {
        lists.pop();
        counters.pop();
      } else {
        lists.push(name);
        counters.push(0);
      }
    } else if (name === 'li' && cell === null) {
      endBlock();
      if (!closing) {
        const depth = lists.length - 1;
        const kind = lists.at(-1) ?? 'ul';
        counters[counters.length - 1] = (counters.at(-1) ?? 0) + 1;
        line = `${'  '.repeat(Math.max(0, depth))}${kind === 'ol' ? `${counters.at(-1)}.` : '-'} `;
      }
    } else if (name === 'table') {
      if (!closing) {
        endBlock();
        table = [];
      } else if (table) {
        blocks.push(markdownTable(table));
        table = null;
      }
    } else if (name === 'tr') {
      if (!closing) row = [];
      else if (row && table) {
        table.push(row);
        row = null;
      }
    } else if (name === 'td' || name === 'th') {
      if (!closing) cell = '';
      else if (row && cell !== null) {
        row.push(cell.replace(/\s+/g, ' ').trim());
        cell = null;
      }
    }
  }
  endBlock();
  // Bold or italic markers left around nothing (an empty run) are noise.
  return `${blocks.map((block) => block.replace(/\*\*\s*\*\*|__/g, '')).join('\n\n')}\n`;
}

function markdownTable(rows: string[][]): string {
  const width = Math.max(1, ...rows.map((row) => row.length));
  const cells = rows.map((row) => Array.from({ length: width }, (_, i) => (row[i] ?? '').replace(/\|/g, '\\|')));
  const [head = [], ...body] = cells;
  return [head, head.map(() => '---'), ...body].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/**
 * A TIFF's pages, each handed to `onPage` as a PNG (what the OCR engine takes) as it is decoded,
 * so a long scan never holds more than one page's pixels.
 */
export async function readTiffPages(bytes: Uint8Array, onPage: (page: number, pages: number, png: Uint8Array) => Promise<void>): Promise<number> {
  // Loaded with the first TIFF: most stacks never see one.
  const [{ default: UTIF }, { encode: encodePng }] = await Promise.all([import('utif2'), import('fast-png')]);
  const buffer = ownBuffer(bytes);
  let ifds: UTIF.IFD[];
  try {
    ifds = UTIF.decode(buffer).filter((ifd) => ifd['t256'] && ifd['t257']);
  } catch (error) {
    throw new OfficeReadError(`is not a TIFF that can be read (${reason(error)})`);
  }
  if (ifds.length === 0) throw new OfficeReadError('has no pages');
  if (ifds.length > MAX_TIFF_PAGES) throw new OfficeReadError(`has ${ifds.length} pages; documents up to ${MAX_TIFF_PAGES.toLocaleString('en')} pages are read here. Split it and upload the parts`);
  for (const [index, ifd] of ifds.entries()) {
    const width = Number((ifd['t256'] as number[])[0]);
    const height = Number((ifd['t257'] as number[])[0]);
    if (width * height > MAX_IMAGE_PIXELS) throw new OfficeReadError(`page ${index + 1} is ${width}×${height} pixels; pages up to 50 megapixels can be read`);
    let rgba: Uint8Array;
    try {
      // The typings leave out the third argument (the other pages, for tables they share).
      (UTIF.decodeImage as (buffer: ArrayBuffer, ifd: UTIF.IFD, all: UTIF.IFD[]) => void)(buffer, ifd, ifds);
      rgba = UTIF.toRGBA8(ifd);
    } catch (error) {
      throw new OfficeReadError(`page ${index + 1} could not be decoded (${reason(error)})`);
    }
    const png = encodePng({ width, height, data: rgba, channels: 4, depth: 8 });
    // The decoded pixels are let go before the next page.
    delete (ifd as { data?: unknown }).data;
    await onPage(index + 1, ifds.length, png);
  }
  return ifds.length;
}

/** The bytes in an ArrayBuffer of their own (a Node Buffer's `.buffer` can be a shared pool). */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  return new Uint8Array(bytes).buffer;
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200) || 'unknown error';
}
