// The document pipeline: after an upload, read the document's text (a PDF's text layer, a text
// file as it is, a scan by OCR) into page artifacts under ocr/<id>/ and the whole text beside the
// original (`invoice.pdf` -> `invoice.pdf.txt`), one document at a time, off the UI thread.
// Scans go to Mistral OCR through the proxy when the user chose it, else (or when that fails) to
// tesseract in this browser.
import type { DocumentRecord, DocumentsStore } from '../../memory/index.ts';
import Papa from 'papaparse';
import type { StackEventBody } from '../../protocol/events.ts';
import type { Settings } from '../../protocol/settings.ts';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import type { UserFiles } from '../user-files.ts';
import { MistralOcrError, readWithMistral } from './mistral-ocr.ts';
import { quarterTurn, turnNote, type OcrEngine, type OcrReadOptions, type OcrResult, type OcrWord } from './ocr.ts';
import { textEncoding } from '../file-kind.ts';
import { detectLanguage, tesseractLanguages, type OcrLanguage, type OcrLanguageChoice } from './languages.ts';
import { OfficeReadError, readDocx, readTiffPages, readWorkbook, type Sheet } from './office.ts';
import { assemble, describeText, hasTextLayer, pageHasText, PdfReadError, readPdfText, type PdfOpener, type PdfPageRenderer } from './pdf-text.ts';

export interface PipelineDeps {
  files: UserFiles;
  documents: Pick<DocumentsStore, 'updateDocument' | 'getDocument'>;
  emit(event: StackEventBody): void;
  openPdf: PdfOpener;
  ocr: OcrEngine;
  /** Absent where pages cannot be drawn (Node); scanned PDFs then say they need OCR. */
  renderPdfPages?: PdfPageRenderer;
  toInfo(record: DocumentRecord): import('../../protocol/documents.ts').DocumentInfo;
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

/** A sheet longer than this gets its CSV only: a table window holds every row in the stack's events. */
export const MAX_TABLE_WINDOW_ROWS = 5_000;
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface Pipeline {
  /** Queues a document; never throws (failures end up on the document's record). */
  process(record: DocumentRecord, options?: { language?: OcrLanguageChoice }): void;
  /** Resolves when everything queued so far is done. */
  idle(): Promise<void>;
}

/** What one page of a document tells the reading of the next: its language, its quarter turn. */
interface PageFinding {
  language?: OcrLanguage;
  turn?: number;
}

/** What tesseract can decode in a browser. */
const OCR_IMAGES = new Set(['image/png', 'image/jpeg', 'image/webp']);

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

export function createPipeline(deps: PipelineDeps): Pipeline {
  let queue: Promise<void> = Promise.resolve();
  /** Documents queued and not yet read. */
  let pending = 0;
  /** The language asked for the document being read ("read again in…"), over the settings'. */
  let override: OcrLanguageChoice | undefined;

  async function update(id: string, patch: Parameters<DocumentsStore['updateDocument']>[1]) {
    const record = await deps.documents.updateDocument(id, patch);
    if (record) deps.emit({ type: 'document_updated', document: deps.toInfo(record) });
  }

  async function run(record: DocumentRecord) {
    if (record.mime === 'application/pdf') return readPdf(record);
    if (record.mime.startsWith('text/')) return readText(record);
    if (OCR_IMAGES.has(record.mime)) return readImage(record);
    if (record.mime === 'image/tiff') return readTiff(record);
    if (record.mime === XLSX) return readXlsx(record);
    if (record.mime === DOCX) return readWord(record);
    await update(record.id, { description: `${record.description}; its text cannot be read here` });
  }

  /** The words OCR read, with their confidences, for save_extraction to mark what it was unsure of. */
  async function saveWords(record: DocumentRecord, pages: OcrWord[][]) {
    await deps.files.write(wordsArtifactPath(record.id), JSON.stringify(pages.map((page) => page.map((word) => [word.text, word.confidence]))));
  }

  /** Marks the document failed with a reason the user can act on. */
  async function failed(record: DocumentRecord, error: unknown) {
    const reason = error instanceof OfficeReadError ? error.message : `could not be read (${failureReason(error)})`;
    await update(record.id, { status: 'failed', error: `${record.filename} ${reason}.` });
  }

  /** Each sheet as a CSV beside the workbook and a table window; the text is every sheet's CSV. */
  async function readXlsx(record: DocumentRecord) {
    await update(record.id, { status: 'processing' });
    try {
      const sheets = await readWorkbook(await deps.files.read(record.path));
      const folder = `${record.path}.sheets`;
      const pages: string[] = [];
      const said: string[] = [];
      for (const [i, sheet] of sheets.entries()) {
        const csv = Papa.unparse(sheet.rows.map((row) => row.map((cell) => cell ?? '')));
        const path = `${folder}/${sheetFileName(sheet.name, i)}.csv`;
        await deps.files.write(path, csv);
        await deps.files.write(pageArtifactPath(record.id, i + 1), `Sheet "${sheet.name}" (/workspace/${path}):\n${csv}`);
        pages.push(`Sheet "${sheet.name}" (/workspace/${path}):\n${csv}`);
        const size = `${sheet.rows.length} × ${sheet.rows[0]?.length ?? 0}`;
        if (deps.openTable && sheet.rows.length > 0 && sheet.rows.length <= MAX_TABLE_WINDOW_ROWS + 1) {
          const { columns, rows } = tableOf(sheet);
          await deps.openTable(`${record.filename}: ${sheet.name}`, columns, rows);
          said.push(`${sheet.name} (${size})`);
        } else said.push(`${sheet.name} (${size}${sheet.rows.length > MAX_TABLE_WINDOW_ROWS + 1 ? ', CSV only' : ''})`);
        deps.emit({ type: 'document_progress', document_id: record.id, page: i + 1, pages: sheets.length });
      }
      await deps.files.write(`${record.path}.txt`, assemble({ pages }));
      const count = `${sheets.length} sheet${sheets.length === 1 ? '' : 's'}`;
      await update(record.id, { status: 'ready', pageCount: sheets.length, description: `Excel workbook "${record.filename}", ${count}: ${said.join(', ')}; each as a CSV in /workspace/${folder}/`, error: null });
    } catch (error) {
      await failed(record, error);
    }
  }

  /** The document as markdown: headings, lists and tables kept. */
  async function readWord(record: DocumentRecord) {
    await update(record.id, { status: 'processing' });
    try {
      const { text } = await readDocx(await deps.files.read(record.path));
      if (!text.trim()) {
        await update(record.id, { status: 'failed', error: `${record.filename}: no text was found in the document.` });
        return;
      }
      await deps.files.write(pageArtifactPath(record.id, 1), text);
      await deps.files.write(`${record.path}.txt`, text);
      const words = text.split(/\s+/).filter((word) => /\w/.test(word)).length;
      const first = text.split('\n').map((line) => line.replace(/^#+\s*/, '').trim()).find((line) => line.length > 3) ?? '';
      await update(record.id, { status: 'ready', pageCount: 1, description: `Word document "${record.filename}", ${words} words${first ? `, begins "${first.slice(0, 80)}"` : ''}`, error: null });
    } catch (error) {
      await failed(record, error);
    }
  }

  /** A TIFF scan (office scanners' default, often many pages): each page read by OCR as it is decoded. */
  async function readTiff(record: DocumentRecord) {
    await update(record.id, { status: 'processing' });
    try {
      const bytes = await deps.files.read(record.path);
      const { pages, confidence, turned } = await ocrPages(record, (onPage) => readTiffPages(bytes, onPage));
      if (!pages.some((page) => page.trim())) {
        await update(record.id, { status: 'failed', error: `${record.filename}: no text was found on its ${pages.length} page${pages.length === 1 ? '' : 's'}.` });
        return;
      }
      await finishOcr(record, pages, confidence, 'Scanned TIFF', null, turned);
    } catch (error) {
      await failed(record, error);
    }
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
  function localOcrNote(confidence: number, mistralFailed: string | null, turned: string | null = null): string {
    const base = `OCR, ${Math.round(confidence)}% confidence${turned ? `, ${turned}` : ''}`;
    return mistralFailed === null ? `(${base})` : `(${base}, in this browser because Mistral OCR failed: ${mistralFailed})`;
  }

  /**
   * One page image through the OCR engine, timed as a User Timing measure named `ocr.page`
   * (DevTools' performance panel shows it; bench/ocr.ts reads it).
   */
  async function recognise(image: Uint8Array, found: PageFinding = {}) {
    const start = performance.now();
    try {
      return await readInLanguage(image, found);
    } finally {
      performance.measure('ocr.page', { start });
    }
  }

  /**
   * A page in the language the settings name; with `auto`, in the language the document's first
   * page was found to be in, else read in English and, when that text is plainly another
   * language, read again in it (with English beside it), turned as the first read found it.
   * `found` carries the language and the page's quarter turn on to the document's next pages.
   */
  async function readInLanguage(image: Uint8Array, found: PageFinding) {
    const choice = override ?? deps.ocrLanguage?.() ?? 'auto';
    const read = async (languages: string, options: OcrReadOptions) => {
      const result = await deps.ocr(image, languages, options);
      found.turn = quarterTurn(result.rotation);
      return result;
    };
    const hint = { turn: found.turn };
    if (choice !== 'auto') return read(tesseractLanguages(choice), hint);
    if (found.language) return read(tesseractLanguages(found.language), hint);
    const english = await read('eng', hint);
    const detected = detectLanguage(english.text);
    found.language = detected ?? 'eng';
    return detected ? read(tesseractLanguages(detected), { rotation: english.rotation ?? 0 }) : english;
  }

  /** A scanned PDF: each page drawn and read by OCR. */
  async function ocrPdf(record: DocumentRecord, bytes: Uint8Array, mistralFailed: string | null) {
    const { pages, confidence, turned } = await ocrPages(record, (onPage) => deps.renderPdfPages!(bytes, onPage));
    await finishOcr(record, pages, confidence, 'Scanned PDF', mistralFailed, turned);
  }

  /**
   * A document's page images (a PDF's pages drawn, a TIFF's decoded), read by OCR as they come,
   * in one language for the whole document. The first page is read alone (its language and turn
   * guide the rest); then as many pages at once as the engine reads in parallel, and one more
   * drawn meanwhile, waiting its turn. Each page's text is saved as it finishes, with
   * progress counting pages done; then every page's words. Returns the texts in page order and
   * the mean confidence.
   */
  async function ocrPages(record: DocumentRecord, feed: (onPage: (page: number, total: number, image: Uint8Array) => Promise<void>) => Promise<unknown>) {
    const results: OcrResult[] = [];
    const finding: PageFinding = {};
    const parallel = Math.max(1, deps.ocr.parallel ?? 1);
    const reading = new Set<Promise<void>>();
    let first: Promise<void> | undefined;
    let done = 0;
    /** The first page that failed: the document fails with its error, once the pages being read end. */
    const failure: { error?: unknown; failed: boolean } = { failed: false };
    const read = async (page: number, total: number, image: Uint8Array) => {
      if (page > 1) await first;
      const result = await recognise(image, finding);
      results[page - 1] = result;
      await deps.files.write(pageArtifactPath(record.id, page), result.text);
      deps.emit({ type: 'document_progress', document_id: record.id, page: ++done, pages: total });
    };
    try {
      await feed(async (page, total, image) => {
        if (failure.failed) throw failure.error;
        const work = read(page, total, image).catch((error: unknown) => {
          if (!failure.failed) Object.assign(failure, { failed: true, error });
        });
        if (page === 1) first = work;
        reading.add(work);
        void work.then(() => reading.delete(work));
        // The first page alone; then as many as the engine reads at once, and one drawn ahead.
        while (reading.size >= (page === 1 ? 1 : parallel + 1)) await Promise.race(reading);
        if (failure.failed) throw failure.error;
      });
    } finally {
      await Promise.all(reading);
    }
    if (failure.failed) throw failure.error;
    const pages = results.map((result) => result.text);
    await saveWords(record, results.map((result) => result.words ?? []));
    const confidence = Math.round(results.reduce((sum, result) => sum + result.confidence, 0) / Math.max(1, results.length));
    const turned = results.filter((result) => quarterTurn(result.rotation)).length;
    return { pages, confidence, turned: turned ? `${turned} of ${pages.length} pages read turned` : null };
  }

  /** The assembled text beside the original, and the record ready with what was read and how. */
  async function finishOcr(record: DocumentRecord, pages: string[], confidence: number, kind: string, mistralFailed: string | null, turned: string | null) {
    await deps.files.write(`${record.path}.txt`, assemble({ pages }));
    await update(record.id, {
      status: 'ready',
      pageCount: pages.length,
      description: `${describeText(record.filename, { pages }).replace(/^PDF/, kind)} ${localOcrNote(confidence, mistralFailed, turned)}`,
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
      await saveWords(record, [result.words ?? []]);
      deps.emit({ type: 'document_progress', document_id: record.id, page: 1, pages: 1 });
      await update(record.id, {
        status: 'ready',
        pageCount: 1,
        description: `${describeText(record.filename, { pages: [result.text] }).replace(/^PDF/, 'Scanned image')} ${localOcrNote(result.confidence, mistralFailed, turnNote(result.rotation))}`,
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
      // Progress through the text layer while its pages have text; a scan's shows when OCR reads it.
      let scanned = false;
      const text = await readPdfText(deps.openPdf, bytes, (page, pages, pageText) => {
        scanned ||= !pageHasText(pageText);
        if (!scanned) deps.emit({ type: 'document_progress', document_id: record.id, page, pages });
      });
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
    process(record, options = {}) {
      pending += 1;
      queue = queue
        .then(async () => {
          // One document at a time: the language asked for this one holds until it is read.
          override = options.language;
          try {
            await run(record);
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

/**
 * Why reading failed, in words: the error's message, or, when the engine gives none (tesseract
 * rejects a damaged image without one), what that means for the user's file.
 */
export function failureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  return message.trim() || 'the image could not be decoded: the file is damaged or cut short';
}

/** A sheet's name as a file name in its folder (never empty, nothing a path could be made of). */
function sheetFileName(name: string, index: number): string {
  const clean = name.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '-').replace(/^\.+/, '').trim();
  return clean || `Sheet ${index + 1}`;
}

/**
 * A sheet as a table window: its first row names the columns when it is all text, and each
 * column is typed by its values (numbers, booleans, ISO dates, else text).
 */
export function tableOf(sheet: Sheet): { columns: TableColumn[]; rows: TableRow[] } {
  const width = sheet.rows[0]?.length ?? 0;
  const header = sheet.rows[0]?.every((cell) => typeof cell === 'string' && cell.trim() !== '') ? sheet.rows[0] : null;
  const body = header ? sheet.rows.slice(1) : sheet.rows;
  const used = new Set<string>();
  const columns: TableColumn[] = Array.from({ length: width }, (_, i) => {
    const label = header ? String(header[i]) : `Column ${i + 1}`;
    let key = label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '') || `column_${i + 1}`;
    while (used.has(key)) key = `${key}_${i + 1}`;
    used.add(key);
    const values = body.map((row) => row[i]).filter((value) => value !== null && value !== undefined && value !== '');
    const type = values.length && values.every((v) => typeof v === 'number') ? 'number' : values.length && values.every((v) => typeof v === 'boolean') ? 'boolean' : values.length && values.every((v) => typeof v === 'string' && /^\d{4}-\d\d-\d\d$/.test(v)) ? 'date' : 'text';
    return { key, label, type };
  });
  const rows: TableRow[] = body.map((row, r) => ({ id: `r${r + 1}`, cells: Object.fromEntries(columns.map((column, i) => [column.key, row[i] ?? null])) }));
  return { columns, rows };
}
