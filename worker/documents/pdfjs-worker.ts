// pdfjs inside a dedicated worker: it gets its own nested worker for parsing, and draws pages on
// OffscreenCanvas (there is no DOM here): a scanned PDF's pages for OCR in the stack worker, and a
// document window's pages in the document view worker (document-view-worker.ts).
// Worker only (it creates a Worker and OffscreenCanvas).
import { getDocument, GlobalWorkerOptions, OPS, type PDFDocumentProxy } from 'pdfjs-dist';
import pdfWorkerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import { greyPgm } from './orientation.ts';
import { scanScale, type PdfOpener, type PdfPageRenderer } from './pdf-text.ts';

let port: Worker | undefined;

/** pdfjs's canvas factory contract, on OffscreenCanvas. */
class OffscreenCanvasFactory {
  create(width: number, height: number) {
    const canvas = new OffscreenCanvas(width, height);
    return { canvas, context: canvas.getContext('2d', { willReadFrequently: true }) };
  }
  reset(target: { canvas: OffscreenCanvas }, width: number, height: number) {
    target.canvas.width = width;
    target.canvas.height = height;
  }
  destroy(target: { canvas: OffscreenCanvas | null; context: unknown }) {
    if (target.canvas) target.canvas.width = target.canvas.height = 0;
    target.canvas = null;
    target.context = null;
  }
}

/** Where pdfjs finds the fonts, character maps and decoders a faithful drawing needs (absolute URLs). */
export interface PdfDataUrls {
  standardFontDataUrl: string;
  cMapUrl: string;
  wasmUrl: string;
}

/** Opens a PDF in this worker; with `urls`, pages draw with the data files text and images may need. */
export function openPdfDocument(bytes: Uint8Array, urls?: PdfDataUrls): Promise<PDFDocumentProxy> {
  // Without an explicit port pdfjs would fall back to a "fake worker" that takes over onmessage.
  port ??= new Worker(pdfWorkerUrl, { type: 'module' });
  GlobalWorkerOptions.workerPort = port;
  return getDocument({ data: bytes, useWorkerFetch: false, isEvalSupported: false, isOffscreenCanvasSupported: true, CanvasFactory: OffscreenCanvasFactory, ...(urls && { ...urls, cMapPacked: true }) }).promise;
}

export const openPdfInWorker: PdfOpener = (bytes) => openPdfDocument(bytes);

/** Draws each page at its scan's resolution (144-216 dpi, see scanScale) and hands it over as a greyscale PGM. */
export const renderPdfPagesInWorker: PdfPageRenderer = async (bytes, onPage) => {
  const doc = await openPdfInWorker(bytes.slice());
  try {
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      // The images the page paints ([objId, width, height] each), for the scale of its scan.
      const operators = await page.getOperatorList();
      const images = operators.fnArray.flatMap((fn, i) => (fn === OPS.paintImageXObject ? [{ width: Number(operators.argsArray[i][1]), height: Number(operators.argsArray[i][2]) }] : []));
      const viewport = page.getViewport({ scale: scanScale(images, page.getViewport({ scale: 1 }).width) });
      const canvas = new OffscreenCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
      const context = canvas.getContext('2d', { willReadFrequently: true })!;
      context.fillStyle = '#fff';
      context.fillRect(0, 0, canvas.width, canvas.height);
      await page.render({ canvas: null, canvasContext: context as unknown as CanvasRenderingContext2D, viewport }).promise;
      // Grey pixels as they are (a PGM): no PNG to encode here and decode again in tesseract.
      const image = greyPgm(context.getImageData(0, 0, canvas.width, canvas.height).data, canvas.width, canvas.height);
      canvas.width = canvas.height = 0;
      page.cleanup();
      await onPage(n, doc.numPages, image);
    }
  } finally {
    await doc.destroy();
  }
};
