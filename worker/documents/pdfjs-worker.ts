// Opens PDFs with pdfjs inside a dedicated worker: pdfjs gets its own nested worker for parsing.
// Worker only (it creates a Worker).
import { getDocument, GlobalWorkerOptions } from 'pdfjs-dist';
import pdfWorkerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';
import type { PdfOpener } from './pdf-text.ts';

let port: Worker | undefined;

export const openPdfInWorker: PdfOpener = (bytes) => {
  // Without an explicit port pdfjs would fall back to a "fake worker" that takes over onmessage.
  port ??= new Worker(pdfWorkerUrl, { type: 'module' });
  GlobalWorkerOptions.workerPort = port;
  return getDocument({ data: bytes, useWorkerFetch: false, isEvalSupported: false }).promise;
};
