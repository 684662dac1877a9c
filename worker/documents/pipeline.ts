// The document pipeline: after an upload, read the document's text (a PDF's text layer, a text
// file as it is) into page artifacts under ocr/<id>/ and the whole text beside the original
// (`invoice.pdf` -> `invoice.pdf.txt`), one document at a time, off the UI thread.
import type { DocumentRecord, DocumentsStore } from '../../memory/index.ts';
import type { StackEventBody } from '../protocol.ts';
import type { UserFiles } from '../user-files.ts';
import { assemble, describeText, hasTextLayer, PdfReadError, readPdfText, type PdfOpener } from './pdf-text.ts';

export interface PipelineDeps {
  files: UserFiles;
  documents: Pick<DocumentsStore, 'updateDocument' | 'getDocument'>;
  emit(event: StackEventBody): void;
  openPdf: PdfOpener;
  toInfo(record: DocumentRecord): import('../protocol.ts').DocumentInfo;
}

export interface Pipeline {
  /** Queues a document; never throws (failures end up on the document's record). */
  process(record: DocumentRecord): void;
  /** Resolves when everything queued so far is done. */
  idle(): Promise<void>;
}

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
    // Images wait for OCR, which is not built yet; they stay uploaded and say so.
    await update(record.id, { description: `${record.description}; its text needs OCR, which is not available yet` });
  }

  async function readText(record: DocumentRecord) {
    const text = new TextDecoder().decode(await deps.files.read(record.path));
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
        await update(record.id, {
          status: 'uploaded',
          pageCount: text.pages.length,
          description: `${record.description}; scanned (no text layer): its text needs OCR, which is not available yet`,
        });
        return;
      }
      for (const [i, page] of text.pages.entries()) await deps.files.write(pageArtifactPath(record.id, i + 1), page);
      await deps.files.write(`${record.path}.txt`, assemble(text));
      await update(record.id, { status: 'ready', pageCount: text.pages.length, description: describeText(record.filename, text), error: null });
    } catch (error) {
      const reason = error instanceof PdfReadError ? error.message : `could not be processed (${(error as Error).message})`;
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
