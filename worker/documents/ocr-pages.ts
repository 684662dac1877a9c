// Pages read by the local OCR engine: in the document's language (found on its first page when
// the settings say `auto`), turned as its pages were found, several pages at once.
import type { DocumentRecord } from '../../memory/index.ts';
import { detectLanguage, tesseractLanguages, type OcrLanguage } from './languages.ts';
import { quarterTurn, type OcrReadOptions, type OcrResult } from './ocr.ts';
import { pageArtifactPath, saveWords, type ReadingContext } from './reading.ts';

/** What one page of a document tells the reading of the next: its language, its quarter turn. */
export interface PageFinding {
  language?: OcrLanguage;
  turn?: number;
}

/**
 * One page image through the OCR engine, timed as a User Timing measure named `ocr.page`
 * (DevTools' performance panel shows it; bench/ocr.ts reads it).
 */
export async function recognise(ctx: ReadingContext, image: Uint8Array, found: PageFinding = {}) {
  const start = performance.now();
  try {
    return await readInLanguage(ctx, image, found);
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
async function readInLanguage(ctx: ReadingContext, image: Uint8Array, found: PageFinding) {
  const choice = ctx.language();
  const read = async (languages: string, options: OcrReadOptions) => {
    const result = await ctx.deps.ocr(image, languages, options);
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

/** Hands each page image to `onPage` as it is drawn or decoded; resolves when the last one is read. */
export type PageFeed = (onPage: (page: number, total: number, image: Uint8Array) => Promise<void>) => Promise<unknown>;

/**
 * A document's page images (a PDF's pages drawn, a TIFF's decoded), read by OCR as they come,
 * in one language for the whole document. The first page is read alone (its language and turn
 * guide the rest); then as many pages at once as the engine reads in parallel, and one more
 * drawn meanwhile, waiting its turn. Each page's text is saved as it finishes, with
 * progress counting pages done; then every page's words. Returns the texts in page order and
 * the mean confidence.
 */
export async function ocrPages(ctx: ReadingContext, record: DocumentRecord, feed: PageFeed) {
  const { deps } = ctx;
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
    const result = await recognise(ctx, image, finding);
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
  await saveWords(ctx, record, results.map((result) => result.words ?? []));
  const confidence = Math.round(results.reduce((sum, result) => sum + result.confidence, 0) / Math.max(1, results.length));
  const turned = results.filter((result) => quarterTurn(result.rotation)).length;
  return { pages, confidence, turned: turned ? `${turned} of ${pages.length} pages read turned` : null };
}
