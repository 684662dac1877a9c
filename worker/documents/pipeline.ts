// The document pipeline: after an upload, read the document's text (a PDF's text layer, a text
// file as it is, a scan by OCR) into page artifacts under ocr/<id>/ and the whole text beside the
// original (`invoice.pdf` -> `invoice.pdf.txt`), one document at a time, off the UI thread.
// Scans go to Mistral OCR through the proxy when the user chose it, else (or when that fails) to
// tesseract in this browser. Each kind of document has its reader (read-*.ts); this file queues
// the documents and hands each to its reader.
import type { DocumentRecord } from '../../memory/index.ts';
import type { OcrLanguageChoice } from './languages.ts';
import { readWord, readXlsx } from './read-office.ts';
import { readPdf } from './read-pdf.ts';
import { readImage, readTiff } from './read-scan.ts';
import { readText } from './read-text.ts';
import type { PipelineDeps, ReadingContext } from './reading.ts';

export type { PipelineDeps } from './reading.ts';
export { failureReason, pageArtifactPath, readWords, wordsArtifactPath } from './reading.ts';
export { MAX_TABLE_WINDOW_ROWS, tableOf } from './read-office.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface Pipeline {
  /** Queues a document; never throws (failures end up on the document's record). */
  process(record: DocumentRecord, options?: { language?: OcrLanguageChoice }): void;
  /** Resolves when everything queued so far is done. */
  idle(): Promise<void>;
}

/** What tesseract can decode in a browser. */
const OCR_IMAGES = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** The reader for a document's type; a type no reader knows gets a description that says so. */
async function read(ctx: ReadingContext, record: DocumentRecord) {
  if (record.mime === 'application/pdf') return readPdf(ctx, record);
  if (record.mime.startsWith('text/')) return readText(ctx, record);
  if (OCR_IMAGES.has(record.mime)) return readImage(ctx, record);
  if (record.mime === 'image/tiff') return readTiff(ctx, record);
  if (record.mime === XLSX) return readXlsx(ctx, record);
  if (record.mime === DOCX) return readWord(ctx, record);
  await ctx.update(record.id, { description: `${record.description}; its text cannot be read here` });
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  let queue: Promise<void> = Promise.resolve();
  /** Documents queued and not yet read. */
  let pending = 0;
  /** The language asked for the document being read ("read again in…"), over the settings'. */
  let override: OcrLanguageChoice | undefined;

  const ctx: ReadingContext = {
    deps,
    async update(id, patch) {
      const record = await deps.documents.updateDocument(id, patch);
      if (record) deps.emit({ type: 'document_updated', document: deps.toInfo(record) });
    },
    language: () => override ?? deps.ocrLanguage?.() ?? 'auto',
  };

  return {
    process(record, options = {}) {
      pending += 1;
      queue = queue
        .then(async () => {
          // One document at a time: the language asked for this one holds until it is read.
          override = options.language;
          try {
            await read(ctx, record);
          } finally {
            override = undefined;
            pending -= 1;
            if (pending === 0) deps.onIdle?.();
          }
        })
        .catch(() => {});
    },
    idle: () => queue,
  };
}
