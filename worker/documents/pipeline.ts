// The document pipeline: after an upload, read the document's text (a PDF's text layer, a text
// file as it is, a scan by OCR) into page artifacts under ocr/<id>/ and the whole text beside the
// original (`invoice.pdf` -> `invoice.pdf.txt`), one document at a time, off the UI thread.
// Scans go to Mistral OCR through the proxy when the user chose it, else (or when that fails) to
// tesseract in this browser.
import type { DocumentRecord, DocumentsStore } from '../../memory/index.ts';
import type { Settings, StackEventBody } from '../protocol.ts';
import type { UserFiles } from '../user-files.ts';
import { MistralOcrError, readWithMistral } from './mistral-ocr.ts';
import type { OcrEngine } from './ocr.ts';
import { textEncoding } from '../file-kind.ts';
import { assemble, describeText, hasTextLayer, PdfReadError, readPdfText, type PdfOpener, type PdfPageRenderer } from './pdf-text.ts';

export interface PipelineDeps {
  files: UserFiles;
  documents: Pick<DocumentsStore, 'updateDocument' | 'getDocument'>;
  emit(event: StackEventBody): void;
  openPdf: PdfOpener;
  ocr: OcrEngine;
  /** Absent where pages cannot be drawn (Node); scanned PDFs then say they need OCR. */
  renderPdfPages?: PdfPageRenderer;
  toInfo(record: DocumentRecord): import('../protocol.ts').DocumentInfo;
  /**
   * How to reach Mistral OCR: the current settings (read for each document) and the network.
   * Scans go to Mistral only while `ocr_engine` is 'mistral' and the provider is the proxy, which
   * holds the key. Absent: every scan is read locally.
   */
  mistralOcr?: { settings(): Pick<Settings, 'provider' | 'endpoint' | 'ocr_engine'>; fetch: typeof fetch };
}

export interface Pipeline {
  /** Queues a document; never throws (failures end up on the document's record). */
  process(record: DocumentRecord): void;
  /** Resolves when everything queued so far is done. */
  idle(): Promise<void>;
}

/** What tesseract can decode in a browser. */
const OCR_IMAGES = new Set(['image/png', 'image/jpeg', 'image/webp']);

export function pageArtifactPath(documentId: string, page: number): string {
  return `ocr/${documentId}/page-${page}.txt`;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  let queue: Promise<void> = Promise.resolve();

  async function update(id: string, patch: Parameters<DocumentsStore['updateDocument']>[1]) {
    const record = await deps.documents.updateDocument(id, patch);
    if (record) deps.emit({ type: 'document_updated', document: deps.toInfo(record) });
  }

  async function run(record: DocumentRecord) {
    if (record.mime === 'application/pdf') return readPdf(record);
    if (record.mime.startsWith('text/')) return readText(record);
    if (OCR_IMAGES.has(record.mime)) return readImage(record);
    // TIFF (browsers cannot decode it for OCR) and spreadsheets stay as they are, and say so.
    await update(record.id, { description: `${record.description}; its text cannot be read here yet` });
  }

  /**
   * Mistral's pages when the user chose Mistral OCR and it read the document; `{ failed }` with
   * the reason when it was chosen and did not; null when it was not chosen. Never throws.
   */
  async function viaMistral(record: DocumentRecord, bytes: Uint8Array): Promise<{ pages: string[] } | { failed: string } | null> {
    const settings = deps.mistralOcr?.settings();
    if (!deps.mistralOcr || settings?.ocr_engine !== 'mistral' || settings.provider !== 'proxy') return null;
    try {
      const { pages } = await readWithMistral(bytes, record.mime, { endpoint: settings.endpoint, fetch: deps.mistralOcr.fetch });
      // Blank pages are fine; a document with no text at all gets a second opinion locally.
      return pages.some((page) => page !== '') ? { pages } : { failed: 'it found no text' };
    } catch (error) {
      return { failed: error instanceof MistralOcrError ? error.message : `it failed (${(error as Error).message})` };
    }
  }

  /** Saves OCR pages as artifacts and the assembled text, with progress, and marks the record ready. */
  async function savePages(record: DocumentRecord, pages: string[], description: string) {
    for (const [i, text] of pages.entries()) {
      await deps.files.write(pageArtifactPath(record.id, i + 1), text);
      deps.emit({ type: 'document_progress', document_id: record.id, page: i + 1, pages: pages.length });
    }
    await deps.files.write(`${record.path}.txt`, assemble({ pages }));
    await update(record.id, { status: 'ready', pageCount: pages.length, description, error: null });
  }

  /** What the description says about the engine: local OCR's confidence, and why not Mistral. */
  function localOcrNote(confidence: number, mistralFailed: string | null): string {
    const base = `OCR, ${Math.round(confidence)}% confidence`;
    return mistralFailed === null ? `(${base})` : `(${base}, in this browser because Mistral OCR failed: ${mistralFailed})`;
  }

  /**
   * One page image through the OCR engine, timed as a User Timing measure named `ocr.page`
   * (DevTools' performance panel shows it; bench/ocr.ts reads it).
   */
  async function recognise(image: Uint8Array) {
    const start = performance.now();
    try {
      return await deps.ocr(image);
    } finally {
      performance.measure('ocr.page', { start });
    }
  }

  /** A scanned PDF: each page drawn and read by OCR. */
  async function ocrPdf(record: DocumentRecord, bytes: Uint8Array, mistralFailed: string | null) {
    const pages: string[] = [];
    const confidences: number[] = [];
    await deps.renderPdfPages!(bytes, async (page, total, png) => {
      const result = await recognise(png);
      pages.push(result.text);
      confidences.push(result.confidence);
      await deps.files.write(pageArtifactPath(record.id, page), result.text);
      deps.emit({ type: 'document_progress', document_id: record.id, page, pages: total });
    });
    await deps.files.write(`${record.path}.txt`, assemble({ pages }));
    const confidence = Math.round(confidences.reduce((a, b) => a + b, 0) / Math.max(1, confidences.length));
    await update(record.id, {
      status: 'ready',
      pageCount: pages.length,
      description: `${describeText(record.filename, { pages }).replace(/^PDF/, 'Scanned PDF')} ${localOcrNote(confidence, mistralFailed)}`,
      error: null,
    });
  }

  async function readImage(record: DocumentRecord) {
    await update(record.id, { status: 'processing' });
    try {
      deps.emit({ type: 'document_progress', document_id: record.id, page: 0, pages: 1 });
      const bytes = await deps.files.read(record.path);
      const remote = await viaMistral(record, bytes);
      if (remote && 'pages' in remote) {
        const text = remote.pages.join('\n\n');
        await savePages(record, [text], `${describeText(record.filename, { pages: [text] }).replace(/^PDF/, 'Scanned image')} (Mistral OCR)`);
        return;
      }
      const mistralFailed = remote === null ? null : remote.failed;
      const result = await recognise(bytes);
      if (!result.text) {
        await update(record.id, { status: 'failed', error: `${record.filename}: no text was found in the image.` });
        return;
      }
      await deps.files.write(pageArtifactPath(record.id, 1), result.text);
      await deps.files.write(`${record.path}.txt`, assemble({ pages: [result.text] }));
      deps.emit({ type: 'document_progress', document_id: record.id, page: 1, pages: 1 });
      await update(record.id, {
        status: 'ready',
        pageCount: 1,
        description: `${describeText(record.filename, { pages: [result.text] }).replace(/^PDF/, 'Scanned image')} ${localOcrNote(result.confidence, mistralFailed)}`,
        error: null,
      });
    } catch (error) {
      await update(record.id, { status: 'failed', error: `${record.filename} could not be read by OCR (${failureReason(error)}).` });
    }
  }

  async function readText(record: DocumentRecord) {
    const bytes = await deps.files.read(record.path);
    // UTF-16 files (with their byte-order mark) are text too; the upload checks let only text in.
    const text = new TextDecoder(textEncoding(bytes) ?? 'utf-8').decode(bytes);
    await deps.files.write(pageArtifactPath(record.id, 1), text);
    const first = text.split('\n').map((line) => line.trim()).find(Boolean) ?? '';
    await update(record.id, { status: 'ready', pageCount: 1, description: `${record.description}${first ? `, begins "${first.slice(0, 80)}"` : ''}` });
  }

  async function readPdf(record: DocumentRecord) {
    await update(record.id, { status: 'processing' });
    try {
      const bytes = await deps.files.read(record.path);
      const text = await readPdfText(deps.openPdf, bytes, (page, pages) => deps.emit({ type: 'document_progress', document_id: record.id, page, pages }));
      if (!hasTextLayer(text)) {
        const remote = await viaMistral(record, bytes);
        if (remote && 'pages' in remote) {
          await savePages(record, remote.pages, `${describeText(record.filename, { pages: remote.pages }).replace(/^PDF/, 'Scanned PDF')} (Mistral OCR)`);
          return;
        }
        const mistralFailed = remote === null ? null : remote.failed;
        if (!deps.renderPdfPages) {
          const why = mistralFailed === null ? '' : ` (Mistral OCR failed: ${mistralFailed})`;
          await update(record.id, { status: 'uploaded', pageCount: text.pages.length, description: `${record.description}; scanned (no text layer): its text needs OCR${why}` });
          return;
        }
        await ocrPdf(record, bytes, mistralFailed);
        return;
      }
      for (const [i, page] of text.pages.entries()) await deps.files.write(pageArtifactPath(record.id, i + 1), page);
      await deps.files.write(`${record.path}.txt`, assemble(text));
      await update(record.id, { status: 'ready', pageCount: text.pages.length, description: describeText(record.filename, text), error: null });
    } catch (error) {
      const reason = error instanceof PdfReadError ? error.message : `could not be processed (${failureReason(error)})`;
      await update(record.id, { status: 'failed', error: `${record.filename} ${reason}.` });
    }
  }

  return {
    process(record) {
      queue = queue.then(() => run(record)).catch(() => {});
    },
    idle: () => queue,
  };
}

/**
 * Why reading failed, in words: the error's message, or, when the engine gives none (tesseract
 * rejects a damaged image without one), what that means for the user's file.
 */
export function failureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  return message.trim() || 'the image could not be decoded: the file is damaged or cut short';
}
