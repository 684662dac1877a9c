// The text layer of a PDF, page by page, with pdfjs running in its own worker beside the stack
// worker (never on the UI thread). Scans have no text layer: they need OCR instead.
import type { PDFDocumentProxy } from 'pdfjs-dist';

export interface PdfText {
  pages: string[];
}

export class PdfReadError extends Error {
  constructor(
    message: string,
    readonly code: 'encrypted' | 'corrupt' | 'too_many_pages',
  ) {
    super(message);
  }
}

export type PdfOpener = (bytes: Uint8Array) => Promise<PDFDocumentProxy>;

/** Longer documents are kept but not read: thousands of pages would hold the pipeline for hours. */
export const MAX_PDF_PAGES = 1000;

/** Draws each page as a PNG for OCR (browser workers only: it needs OffscreenCanvas). */
/** How much larger than its size in points a scanned page is drawn for OCR: 3 is 216 dpi. */
export const OCR_RENDER_SCALE = 3;
/** A scanned page is drawn no smaller than this (144 dpi). */
const MIN_SCAN_SCALE = 2;

/**
 * The scale to draw a scanned page at for OCR: its scan's own resolution (the largest image on
 * the page, taken to cover its width), between 144 and 216 dpi. Drawing a 150 dpi scan at 216
 * dpi gives OCR twice the pixels and nothing more to read. Pages without a large image (at least
 * a megapixel) are drawn at OCR_RENDER_SCALE.
 */
export function scanScale(images: { width: number; height: number }[], pageWidthPt: number): number {
  const scan = images.filter((image) => image.width * image.height >= 1_000_000).sort((a, b) => b.width * b.height - a.width * a.height)[0];
  if (!scan || !(pageWidthPt > 0)) return OCR_RENDER_SCALE;
  return Math.min(OCR_RENDER_SCALE, Math.max(MIN_SCAN_SCALE, scan.width / pageWidthPt));
}

export type PdfPageRenderer = (bytes: Uint8Array, onPage: (page: number, pages: number, image: Uint8Array) => Promise<void>) => Promise<void>;

/** Reads every page's text; calls `onPage` after each, with its text. Throws PdfReadError for bad or over-long files. */
export async function readPdfText(open: PdfOpener, bytes: Uint8Array, onPage?: (page: number, pages: number, text: string) => void): Promise<PdfText> {
  let doc: PDFDocumentProxy;
  try {
    doc = await open(bytes.slice());
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException') throw new PdfReadError('is password-protected; remove the password and upload it again', 'encrypted');
    throw new PdfReadError(`could not be read as a PDF (${(error as Error).message || name || 'unknown error'})`, 'corrupt');
  }
  try {
    if (doc.numPages > MAX_PDF_PAGES) {
      const count = doc.numPages.toLocaleString('en');
      throw new PdfReadError(`has ${count} pages; documents up to ${MAX_PDF_PAGES.toLocaleString('en')} pages are read here. Split it and upload the parts`, 'too_many_pages');
    }
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const text = joinItems(content.items as { str?: string; hasEOL?: boolean }[]);
      pages.push(text);
      page.cleanup();
      onPage?.(n, doc.numPages, text);
    }
    return { pages };
  } finally {
    await doc.destroy();
  }
}

/** pdfjs gives runs of text; hasEOL marks line ends. */
function joinItems(items: { str?: string; hasEOL?: boolean }[]): string {
  let text = '';
  for (const item of items) {
    if (typeof item.str === 'string') text += item.str;
    if (item.hasEOL) text += '\n';
  }
  return text.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** A page with fewer characters than this is taken to be an image (a scan). */
export const MIN_TEXT_PER_PAGE = 20;

export function hasTextLayer(text: PdfText): boolean {
  return text.pages.length > 0 && text.pages.every(pageHasText);
}

/** Whether a page's text layer holds text, not just a scan's stray marks. */
export function pageHasText(page: string): boolean {
  return page.replace(/\s/g, '').length >= MIN_TEXT_PER_PAGE;
}

/** The pages as one text, each headed so read_ocr and the agent can cite them. */
export function assemble(text: PdfText): string {
  return text.pages.map((page, i) => `--- page ${i + 1} ---\n${page}`).join('\n\n');
}

/** A one-line description from the first meaningful line of text. */
export function describeText(name: string, text: PdfText): string {
  const first = text.pages.join('\n').split('\n').map((line) => line.trim()).find((line) => line.length > 3) ?? '';
  const pages = `${text.pages.length} page${text.pages.length === 1 ? '' : 's'}`;
  return `PDF "${name}", ${pages}${first ? `, begins "${first.slice(0, 80)}"` : ''}`;
}
