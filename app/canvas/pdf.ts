// pdfjs on the main thread, loaded only when a PDF window opens; its own worker parses the file.
import type { PDFDocumentProxy, RenderTask } from 'pdfjs-dist';

export interface PdfHandle {
  pages: number;
  /** A page's width in CSS pixels at scale 1. */
  pageWidth(page: number): Promise<number>;
  render(page: number, scale: number, canvas: HTMLCanvasElement): Promise<void>;
  cancel(canvas: HTMLCanvasElement | null): void;
  destroy(): Promise<void>;
}

let pdfjs: Promise<typeof import('pdfjs-dist')> | undefined;

function loadPdfjs() {
  pdfjs ??= (async () => {
    const [lib, worker] = await Promise.all([import('pdfjs-dist'), import('pdfjs-dist/build/pdf.worker.min.mjs?url')]);
    lib.GlobalWorkerOptions.workerSrc = worker.default;
    // Evaluating pdfjs (400 kB) is a long task of its own (68 ms in a loaded run); opening the
    // document waits for the next task, so a key pressed meanwhile is answered between the two
    // rather than after both (101 ms in one frame).
    await new Promise((resolve) => setTimeout(resolve, 0));
    return lib;
  })();
  return pdfjs;
}

/** Rejects with pdfjs's reason for a damaged or password-protected file. */
export async function openPdf(bytes: Uint8Array): Promise<PdfHandle> {
  const lib = await loadPdfjs();
  // pdfjs takes ownership of the buffer it is given, so it gets a copy.
  const doc: PDFDocumentProxy = await lib.getDocument({
    data: bytes.slice(),
    standardFontDataUrl: new URL(`${import.meta.env.BASE_URL}pdfjs/standard_fonts/`, document.baseURI).href,
    cMapUrl: new URL(`${import.meta.env.BASE_URL}pdfjs/cmaps/`, document.baseURI).href,
    cMapPacked: true,
    wasmUrl: new URL(`${import.meta.env.BASE_URL}pdfjs/wasm/`, document.baseURI).href,
  }).promise;
  const tasks = new WeakMap<HTMLCanvasElement, RenderTask>();
  return {
    pages: doc.numPages,
    pageWidth: async (pageNumber) => (await doc.getPage(pageNumber)).getViewport({ scale: 1 }).width,
    async render(pageNumber, scale, canvas) {
      tasks.get(canvas)?.cancel();
      const page = await doc.getPage(pageNumber);
      const viewport = page.getViewport({ scale: scale * (globalThis.devicePixelRatio || 1) });
      canvas.width = viewport.width;
      canvas.height = viewport.height;
      canvas.style.width = `${viewport.width / (globalThis.devicePixelRatio || 1)}px`;
      const task = page.render({ canvas, viewport });
      tasks.set(canvas, task);
      try {
        await task.promise;
      } catch (error) {
        if ((error as { name?: string }).name !== 'RenderingCancelledException') throw error;
      }
    },
    cancel(canvas) {
      if (canvas) tasks.get(canvas)?.cancel();
    },
    destroy: () => doc.destroy(),
  };
}
