// The document view worker, started by the page (app/canvas/document-view.ts): document windows'
// PDF pages are drawn here, on OffscreenCanvas, and their pictures (scans, photos) decoded and
// scaled to the size shown, and both handed to the page as bitmaps. Drawing a page is tens to
// hundreds of milliseconds of script and painting, and scaling a scan tens; on the page's main
// thread they held keys typed meanwhile past 100 ms on two cores. pdfjs loads with the first PDF.
import * as Comlink from 'comlink';
import type { PDFDocumentProxy, RenderTask } from 'pdfjs-dist';
import type { PdfDataUrls } from './pdfjs-worker.ts';

// What the worker's Content-Security-Policy refuses is said where the page's console shows it (the
// browser's own report stays in the worker's, which tests and bug reports do not see).
self.addEventListener('securitypolicyviolation', (event) => console.error(`Content Security Policy: the worker ${self.name || self.location.pathname} was refused ${event.effectiveDirective} ${event.blockedURI || '(inline)'}`));

export interface DocumentViewApi {
  /** Rejects with pdfjs's reason (its name kept) for a damaged or password-protected file. */
  open(bytes: Uint8Array, urls: PdfDataUrls): Promise<{ id: number; pages: number }>;
  /** A page's width at scale 1, in PDF points (CSS pixels). */
  pageWidth(id: number, page: number): Promise<number>;
  /** The page drawn at `scale`, or null when a later drawing for the same `target` took its place. */
  render(id: number, page: number, scale: number, target: number): Promise<ImageBitmap | null>;
  /** Stops the drawing under way for `target`, if any. */
  cancel(target: number): void;
  close(id: number): Promise<void>;
  /**
   * A picture (PNG, JPEG, WebP, GIF) scaled to `width` pixels wide, never wider than it is.
   * Rejects with the browser's reason when it cannot be decoded.
   */
  picture(picture: Blob, width: number): Promise<ImageBitmap>;
}

const documents = new Map<number, PDFDocumentProxy>();
const drawing = new Map<number, RenderTask>();
let next = 1;

function opened(id: number): PDFDocumentProxy {
  const doc = documents.get(id);
  if (!doc) throw new Error(`PDF ${id} is not open (its window was closed).`);
  return doc;
}

const api: DocumentViewApi = {
  async open(bytes, urls) {
    const { openPdfDocument } = await import('./pdfjs-worker.ts');
    const doc = await openPdfDocument(bytes, urls);
    const id = next++;
    documents.set(id, doc);
    return { id, pages: doc.numPages };
  },

  async pageWidth(id, page) {
    return (await opened(id).getPage(page)).getViewport({ scale: 1 }).width;
  },

  async render(id, pageNumber, scale, target) {
    drawing.get(target)?.cancel();
    const page = await opened(id).getPage(pageNumber);
    const viewport = page.getViewport({ scale });
    const canvas = new OffscreenCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    const context = canvas.getContext('2d')!;
    const task = page.render({ canvas: null, canvasContext: context as unknown as CanvasRenderingContext2D, viewport });
    drawing.set(target, task);
    try {
      await task.promise;
    } catch (error) {
      if ((error as { name?: string }).name === 'RenderingCancelledException') return null;
      throw error;
    } finally {
      if (drawing.get(target) === task) drawing.delete(target);
    }
    const bitmap = canvas.transferToImageBitmap();
    return Comlink.transfer(bitmap, [bitmap]);
  },

  cancel(target) {
    drawing.get(target)?.cancel();
  },

  async close(id) {
    const doc = documents.get(id);
    documents.delete(id);
    await doc?.destroy();
  },

  async picture(picture, width) {
    // Decoded whole once (the header's size is before any EXIF turn), scaled, and let go: only
    // the shown size outlives the call.
    const whole = await createImageBitmap(picture);
    if (whole.width <= width) return Comlink.transfer(whole, [whole]);
    try {
      const shown = await createImageBitmap(whole, { resizeWidth: Math.max(1, Math.round(width)), resizeQuality: 'high' });
      return Comlink.transfer(shown, [shown]);
    } finally {
      whole.close();
    }
  },
};

Comlink.expose(api);
