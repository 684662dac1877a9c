// pdfjs for Node (unit tests, benchmarks): the legacy build parses in-process.
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PdfOpener } from './pdf-text.ts';

export const openPdfInNode: PdfOpener = (bytes) =>
  getDocument({ data: bytes, useWorkerFetch: false, isEvalSupported: false, verbosity: 0 }).promise as ReturnType<PdfOpener>;
