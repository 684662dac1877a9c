// OCR with tesseract.js, offline: its worker script, wasm cores and English data are served by
// the app itself (under /ocr/, precached). One tesseract worker is kept while documents come.
import { createWorker, PSM, type Page, type Worker as TesseractWorker } from 'tesseract.js';

/**
 * How pages are segmented: as one block of text, line by line across the page, which keeps an
 * invoice's table row on one line. It is tesseract's own default; its command line uses
 * automatic layout analysis instead (`--psm 3`), which bench/ocr.ts overrides to compare like
 * with like. Set explicitly so that every engine here (browser, Node) reads pages the same way.
 */
export const OCR_PARAMETERS = { tessedit_pageseg_mode: PSM.SINGLE_BLOCK };

export interface OcrResult {
  text: string;
  /** 0..100, tesseract's mean word confidence. */
  confidence: number;
  /** Each word read, in reading order, with tesseract's confidence in it (0..100). */
  words?: OcrWord[];
}

export interface OcrWord {
  text: string;
  confidence: number;
}

/** The text, the mean confidence and each word's, from a tesseract page read with `blocks` output. */
export function resultOf(data: Page): OcrResult {
  const words = (data.blocks ?? []).flatMap((block) => block.paragraphs.flatMap((paragraph) => paragraph.lines.flatMap((line) => line.words)));
  return { text: data.text.trim(), confidence: data.confidence, words: words.map((word) => ({ text: word.text, confidence: Math.round(word.confidence) })) };
}

/** What a page read returns: its text and its words' boxes (for each word's confidence). */
export const OCR_OUTPUT = { text: true, blocks: true } as const;

/** Reads one page image; `languages` as tesseract names them (`eng`, `deu+eng`), English when absent. */
export type OcrEngine = (image: Uint8Array, languages?: string) => Promise<OcrResult>;

export interface OcrPaths {
  /** Directory URL holding worker.min.js, the tesseract-core*.wasm.js cores and eng.traineddata.gz. */
  base: string;
}

/** The browser engine; each call recognises one page image (PNG, JPEG, WebP, BMP). */
export function createBrowserOcr(paths: OcrPaths): OcrEngine {
  const worker = keptWorker((languages) =>
    createWorker(languages, 1, {
      workerPath: `${paths.base}worker.min.js`,
      corePath: paths.base,
      langPath: paths.base,
      workerBlobURL: false,
      gzip: true,
      // The service worker keeps the data files (English precached, the others once fetched).
      cacheMethod: 'none',
    }),
  );
  return async (image, languages = 'eng') => {
    const { data } = await (await worker(languages)).recognize(new Blob([image as Uint8Array<ArrayBuffer>]), {}, OCR_OUTPUT);
    return resultOf(data);
  };
}

/**
 * One tesseract worker, kept while documents come, loaded with the languages a page asks for
 * (reinitialised only when they change). Calls are taken in turn.
 */
export function keptWorker(create: (languages: string) => Promise<TesseractWorker>): (languages: string) => Promise<TesseractWorker> {
  let current: { languages: string; worker: Promise<TesseractWorker> } | undefined;
  return async (languages) => {
    if (!current) {
      current = { languages, worker: create(languages).then(withOcrParameters) };
    } else if (current.languages !== languages) {
      const previous = current.worker;
      current = { languages, worker: previous.then(async (worker) => withOcrParameters(await worker.reinitialize(languages, 1).then(() => worker))) };
    }
    return current.worker;
  };
}

/** Applies OCR_PARAMETERS to a new tesseract.js worker. */
export async function withOcrParameters(worker: TesseractWorker): Promise<TesseractWorker> {
  await worker.setParameters(OCR_PARAMETERS);
  return worker;
}
