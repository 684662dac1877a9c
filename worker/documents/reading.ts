// What every reader of a document shares: the pipeline's dependencies, where the readings go
// (page artifacts under ocr/<id>/, the words OCR read), and how a record is updated or failed.
import type { DocumentRecord, DocumentsStore } from '../../memory/index.ts';
import type { DocumentInfo } from '../../protocol/documents.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import type { Settings } from '../../protocol/settings.ts';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import type { UserFiles } from '../user-files.ts';
import type { OcrLanguageChoice } from './languages.ts';
import type { OcrEngine, OcrWord } from './ocr.ts';
import { OfficeReadError } from './office.ts';
import type { PdfOpener, PdfPageRenderer } from './pdf-text.ts';

export interface PipelineDeps {
  files: UserFiles;
  documents: Pick<DocumentsStore, 'updateDocument' | 'getDocument'>;
  emit(event: StackEventBody): void;
  openPdf: PdfOpener;
  ocr: OcrEngine;
  /** Absent where pages cannot be drawn (Node); scanned PDFs then say they need OCR. */
  renderPdfPages?: PdfPageRenderer;
  toInfo(record: DocumentRecord): DocumentInfo;
  /**
   * How to reach Mistral OCR: the current settings (read for each document) and the network.
   * Scans go to Mistral only while `ocr_engine` is 'mistral' and the provider is the proxy, which
   * holds the key. Absent: every scan is read locally.
   */
  mistralOcr?: { settings(): Pick<Settings, 'provider' | 'endpoint' | 'ocr_engine'>; fetch: typeof fetch };
  /** The language scans are read in (Settings); `auto` when absent. */
  ocrLanguage?(): OcrLanguageChoice;
  /** Opens a table window (a workbook's sheet); absent where there is no canvas. */
  openTable?(title: string, columns: TableColumn[], rows: TableRow[]): Promise<void>;
  /** Called each time every document queued so far has been read (the queue is empty again). */
  onIdle?(): void;
}

/** What a reader is handed: the pipeline's dependencies and the document being read. */
export interface ReadingContext {
  deps: PipelineDeps;
  /** Updates the record and tells the page. */
  update(id: string, patch: Parameters<DocumentsStore['updateDocument']>[1]): Promise<void>;
  /** The language to read this document in: the one asked for it ("read again in…"), else the settings'. */
  language(): OcrLanguageChoice;
}

export function pageArtifactPath(documentId: string, page: number): string {
  return `ocr/${documentId}/page-${page}.txt`;
}

/** Each OCR'd page's words with tesseract's confidence: `[[text, confidence], ...]` per page. */
export function wordsArtifactPath(documentId: string): string {
  return `ocr/${documentId}/words.json`;
}

/** The words OCR read in a document, each with its confidence, in reading order; none when it was not OCR'd here. */
export async function readWords(files: Pick<UserFiles, 'read' | 'stat'>, documentId: string): Promise<OcrWord[]> {
  const path = wordsArtifactPath(documentId);
  if (!(await files.stat(path))) return [];
  try {
    const pages = JSON.parse(new TextDecoder().decode(await files.read(path))) as [string, number][][];
    return pages.flat().map(([text, confidence]) => ({ text, confidence }));
  } catch {
    return [];
  }
}

/** The words OCR read, with their confidences, for save_extraction to mark what it was unsure of. */
export async function saveWords(ctx: ReadingContext, record: DocumentRecord, pages: OcrWord[][]) {
  await ctx.deps.files.write(wordsArtifactPath(record.id), JSON.stringify(pages.map((page) => page.map((word) => [word.text, word.confidence]))));
}

/** Marks the document failed with a reason the user can act on. */
export async function failed(ctx: ReadingContext, record: DocumentRecord, error: unknown) {
  const reason = error instanceof OfficeReadError ? error.message : `could not be read (${failureReason(error)})`;
  await ctx.update(record.id, { status: 'failed', error: `${record.filename} ${reason}.` });
}

/**
 * Why reading failed, in words: the error's message, or, when the engine gives none (tesseract
 * rejects a damaged image without one), what that means for the user's file.
 */
export function failureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  return message.trim() || 'the image could not be decoded: the file is damaged or cut short';
}
