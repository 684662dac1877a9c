// OCR with tesseract.js, offline: its worker script, wasm cores and English data are served by
// the app itself (under /ocr/, precached). One tesseract worker is kept while documents come.
// Pages are read upright: a small skew is measured and straightened, and a page turned a quarter
// or half turn (a phone photo, a sheet fed sideways) is found by reading it turned (see readUpright).
import { createWorker, PSM, type Page, type RecognizeOptions, type Worker as TesseractWorker } from 'tesseract.js';
import { canTurn, withQuarterTurn } from './orientation.ts';
import { pageLines, rereadUnsure } from './reread.ts';
import { joinWrappedRows } from './rows.ts';

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
  /**
   * How far the page was turned before it was read, in radians, clockwise: a quarter turn found
   * plus the skew straightened. Absent or 0 for a page read as it came.
   */
  rotation?: number;
}

export interface OcrWord {
  text: string;
  confidence: number;
}

/**
 * The text, the mean confidence and each word's, from a tesseract page read with `blocks` output;
 * table rows whose description wrapped onto the next line made one again (rows.ts). `edited`: the
 * page's words were changed since tesseract read it (reread.ts), so its own text is stale.
 */
export function resultOf(data: Page, edited = false): OcrResult {
  const blocks = data.blocks ?? [];
  const words = pageLines(data).flatMap((line) => line.words);
  return { text: joinedText(blocks, edited) ?? data.text.trim(), confidence: data.confidence, words: words.map((word) => ({ text: word.text, confidence: Math.round(word.confidence) })) };
}

/**
 * The page's lines again from their words, with wrapped rows joined; null when no row was wrapped
 * and no words were `edited` (tesseract's own text stands).
 */
function joinedText(blocks: NonNullable<Page['blocks']>, edited: boolean): string | null {
  let joined = edited;
  const text = blocks.map((block) => {
    const lines = block.paragraphs.flatMap((paragraph) => paragraph.lines);
    const rows = joinWrappedRows(lines);
    if (rows) joined = true;
    return (rows ?? lines).map((line) => line.words.map((word) => word.text).join(' ')).join('\n');
  });
  return joined ? text.join('\n\n').trim() : null;
}

/** What a page read returns: its text and its words' boxes (for each word's confidence). */
export const OCR_OUTPUT = { text: true, blocks: true } as const;

export interface OcrReadOptions {
  /**
   * Read the page turned by exactly this much (radians, as OcrResult.rotation reports it): the
   * same page again in another language, with no search for its orientation.
   */
  rotation?: number;
  /**
   * The quarter turn (0, 90, 180 or 270 degrees) the document's previous page needed: tried
   * first, since a document fed sideways is usually sideways throughout.
   */
  turn?: number;
}

/**
 * Reads one page image; `languages` as tesseract names them (`eng`, `deu+eng`), English when
 * absent. The result's `rotation` says how the page was turned to read it.
 */
export type OcrEngine = ((image: Uint8Array, languages?: string, options?: OcrReadOptions) => Promise<OcrResult>) & {
  /** How many pages it reads at once (its pool of tesseract workers); 1 when absent. */
  parallel?: number;
  /**
   * Ends the workers not reading a page now, rather than after their idle time (the tab was
   * hidden and may be discarded next); returns how many. The next page starts one again.
   */
  release?(): number;
  /**
   * Starts a worker loading `languages` (English when absent) when none is there yet, so that a
   * page known to be coming (an image being attached) does not wait for the engine to start.
   */
  prepare?(languages?: string): void;
};

/** One tesseract read of a page image, turned by `rotateRadians` (about its centre, in its own frame) when given. */
export type TesseractRead = (image: Uint8Array, languages: string, options: ReadOptions) => Promise<Page>;

/** How a page image is read: turned about its centre by `rotateRadians`, only inside `rectangle` (in the turned frame). */
type ReadOptions = Partial<Pick<RecognizeOptions, 'rotateRadians' | 'rectangle'>>;

/**
 * Below this mean confidence a page with words on it may be lying turned: an upright scan,
 * even a noisy one, reads at 80-95; the same page a quarter or half turn round at 25-50.
 */
export const TURNED_BELOW = 65;
/** A turned read this sure is taken at once, without trying the remaining turns. */
const UPRIGHT_AT = 80;
/** The quarter turns tried, in the order phones and feeders most often leave a page. */
const TURNS = [90, 270, 180];
/**
 * Lines sloping this much are straightened and the page read again. Below it tesseract reads a
 * crooked scan as well as a straightened one or better (measured on the generated scans: pages
 * up to 1.4° lost fields when turned straight; at 3° and 5° straightening gained them).
 */
export const STRAIGHTEN_FROM = (2 * Math.PI) / 180;

/**
 * A straightened read is kept only when it is this much surer (mean word confidence) than the
 * crooked one. Turning the image resamples it and can cost a small glyph (the comma of
 * "1,128.21"), and the crooked read's unsure words are read again anyway (reread.ts). On the
 * generated scans 3° crooked: kept at 2-3 points, 107/110 fields; at 0-1, 104-105; at 5, 105; never
 * straightened, 103.
 */
export const STRAIGHTER_BY = 2;

const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** The quarter turn (0, 90, 180, 270) in a rotation, leaving aside the skew. */
export function quarterTurn(rotation: number | undefined): number {
  return (((Math.round((rotation ?? 0) / (Math.PI / 2)) % 4) + 4) % 4) * 90;
}

/**
 * How far a read page's text lines slope, in radians (positive: down to the right, as a page
 * turned clockwise lies): the median of its lines' baselines, from three long lines up; 0 when
 * there are fewer.
 */
export function lineSlope(page: Page): number {
  const slopes = pageLines(page)
    .map((line) => line.baseline)
    .filter((baseline) => baseline && baseline.x1 - baseline.x0 >= 100)
    .map((baseline) => Math.atan2(baseline.y1 - baseline.y0, baseline.x1 - baseline.x0))
    .sort((a, b) => a - b);
  return slopes.length >= 3 ? slopes[Math.floor(slopes.length / 2)]! : 0;
}

/**
 * An engine that reads each page upright, from one that reads it as told. A page whose lines
 * slope 2° or more is read again straightened, kept when clearly surer (STRAIGHTER_BY). When a read is unsure
 * and found words, the page is read a quarter turn each way and a half turn round, and the
 * surest read wins; a sure one ends the search. A page the previous one showed turned is tried
 * turned first. Only JPEG and PNG pages can be turned (see orientation.ts); others are read as
 * they come. Of the read kept, the words tesseract was unsure of are read again on their own
 * (reread.ts).
 */
export function readUpright(read: TesseractRead): OcrEngine {
  /** One read of the page as `image` and `options` show it, kept with them for reading parts of it again. */
  type Read = { page: Page; result: OcrResult; image: Uint8Array; options: ReadOptions; rotation: number };
  const once = async (image: Uint8Array, languages: string, options: ReadOptions, rotation: number): Promise<Read> => {
    const page = await read(image, languages, options);
    return { page, result: withRotation(resultOf(page), rotation), image, options, rotation };
  };
  /** The page turned clockwise by `turn` degrees, and straightened when its lines slope. */
  const turned = async (image: Uint8Array, languages: string, turn: number): Promise<Read> => {
    const marked = withQuarterTurn(image, turn);
    let best = await once(marked, languages, {}, radians(turn));
    const slope = lineSlope(best.page);
    if (Math.abs(slope) >= STRAIGHTEN_FROM) {
      const straight = await once(marked, languages, { rotateRadians: -slope }, radians(turn) - slope);
      if (straight.result.confidence >= best.result.confidence + STRAIGHTER_BY) best = straight;
    }
    return best;
  };
  /** The chosen read, its unsure words read again on their own (reread.ts). */
  const finish = async ({ page, result, image, options, rotation }: Read, languages: string): Promise<OcrResult> => {
    const replaced = await rereadUnsure(page, (rectangle) => read(image, languages, { ...options, rectangle }));
    return replaced ? withRotation({ ...resultOf(page, true), confidence: result.confidence }, rotation) : result;
  };
  return async (image, languages = 'eng', options = {}) => {
    if (options.rotation !== undefined) {
      const turn = canTurn(image) ? quarterTurn(options.rotation) : 0;
      const skew = options.rotation - radians(turn);
      return finish(await once(withQuarterTurn(image, turn), languages, skew ? { rotateRadians: skew } : {}, options.rotation), languages);
    }
    if (options.turn && canTurn(image)) {
      const hinted = await turned(image, languages, options.turn);
      if (hinted.result.confidence >= TURNED_BELOW) return finish(hinted, languages);
    }
    let best = await turned(image, languages, 0);
    if (best.result.confidence >= TURNED_BELOW || (best.result.words?.length ?? 0) < 3 || !canTurn(image)) return finish(best, languages);
    for (const turn of TURNS) {
      if (turn === options.turn) continue;
      const next = await turned(image, languages, turn);
      if (next.result.confidence > best.result.confidence) best = next;
      if (best.result.confidence >= UPRIGHT_AT) break;
    }
    return finish(best, languages);
  };
}

function withRotation(result: OcrResult, rotation: number): OcrResult {
  if (rotation) result.rotation = rotation;
  return result;
}

/** What the pipeline says of a turned page: "read turned 90°", or null when it was read as it came. */
export function turnNote(rotation: number | undefined): string | null {
  const turn = quarterTurn(rotation);
  return turn ? `read turned ${turn}°` : null;
}

export interface OcrPaths {
  /** Directory URL holding worker.min.js, the tesseract-core*.wasm.js cores and eng.traineddata.gz. */
  base: string;
}

/**
 * How many tesseract workers to run: one per core but one, which is left to the page, and two on
 * two cores (both reading, a 20-page scan went 1.5x faster, 2.3 to 3.5 pages/s, and keys typed
 * all the while answered in 32 ms at worst: the page needs far less than a core), as far as
 * memory allows (each holds a model and a page: 100-200 MB), one to four. A one-page scan uses
 * one. `navigator.deviceMemory` is Chromium's, in GB, capped at 8.
 */
export function ocrPoolSize(cores = globalThis.navigator?.hardwareConcurrency, memoryGb = (globalThis.navigator as { deviceMemory?: number } | undefined)?.deviceMemory): number {
  const byCores = !cores || cores < 2 ? 1 : cores === 2 ? 2 : cores - 1;
  const byMemory = memoryGb ? Math.floor(memoryGb / 2) : 2;
  return Math.max(1, Math.min(byCores, byMemory, 4));
}

/** The browser engine; each call recognises one page image (PNG, JPEG, WebP, BMP), `size` at once. */
export function createBrowserOcr(paths: OcrPaths, size = ocrPoolSize()): OcrEngine {
  const pool = workerPool(size, (languages) =>
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
  const engine = readUpright((image, languages, options) =>
    pool.run(languages, async (worker) => (await worker.recognize(new Blob([image as Uint8Array<ArrayBuffer>]), options, OCR_OUTPUT)).data),
  );
  return Object.assign(engine, { parallel: size, release: () => pool.releaseIdle(), prepare: (languages = 'eng') => pool.warm(languages) });
}

export interface WorkerPool {
  /** Runs `job` on a worker loaded with `languages` once one is free. */
  run<T>(languages: string, job: (worker: TesseractWorker) => Promise<T>): Promise<T>;
  /**
   * Starts a worker loading `languages` when the pool has none, to be ready for a job about to
   * come; it ends after the first worker's idle time if none comes.
   */
  warm(languages: string): void;
  /** Ends every worker not running a job now; returns how many. */
  releaseIdle(): number;
  /** Ends every worker started. */
  terminate(): Promise<void>;
}

/**
 * Up to `size` tesseract workers, started only when every one is busy (pages read one after
 * another use one), each kept with its languages; all but the first end after `idleMs` without
 * work, and the first after `lastIdleMs` (each holds 100-200 MB; the next scan then starts one
 * again, about 1.5 s). A job goes to a free worker that already has its languages, else to any free one (which
 * loads them), else to a new one, else waits its turn. tesseract.js's own scheduler hands jobs to
 * workers that all share one language; pages here come in several.
 */
export function workerPool(size: number, create: (languages: string) => Promise<TesseractWorker>, idleMs = 30_000, lastIdleMs = 120_000): WorkerPool {
  type Slot = { languages: (languages: string) => Promise<TesseractWorker>; current: string | null; busy: boolean; started: Promise<TesseractWorker> | null; idle?: ReturnType<typeof setTimeout> };
  const slots: Slot[] = [];
  /** Ends a slot's worker and forgets it. */
  const retire = (slot: Slot) => {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    void slot.started?.then((worker) => worker.terminate()).catch(() => {});
  };
  const waiting: (() => void)[] = [];
  const pick = (languages: string) => {
    // A free worker with these languages, else any free one (it loads them), else a new one.
    const free = slots.filter((slot) => !slot.busy);
    const slot = free.find((candidate) => candidate.current === languages) ?? free[0];
    if (slot) return slot;
    if (slots.length >= size) return undefined;
    const fresh: Slot = { languages: keptWorker((l) => (fresh.started ??= create(l))), current: null, busy: false, started: null };
    slots.push(fresh);
    return fresh;
  };
  /** Ends `slot`'s worker once it has been idle its time: a long scan's helpers soon, the first later. */
  const retireWhenIdle = (slot: Slot) => {
    slot.idle = setTimeout(() => !slot.busy && retire(slot), slots.indexOf(slot) > 0 ? idleMs : lastIdleMs);
    (slot.idle as { unref?: () => void }).unref?.();
  };
  return {
    warm(languages) {
      if (slots.length > 0) return;
      const slot = pick(languages)!;
      slot.current = languages;
      // A worker that cannot start is dropped, as when a job starts it (the job then says why).
      void slot.languages(languages).catch(() => retire(slot));
      retireWhenIdle(slot);
    },
    async run(languages, job) {
      let slot = pick(languages);
      while (!slot) {
        await new Promise<void>((resolve) => waiting.push(resolve));
        slot = pick(languages);
      }
      slot.busy = true;
      slot.current = languages;
      clearTimeout(slot.idle);
      try {
        let worker: TesseractWorker;
        try {
          worker = await slot.languages(languages);
        } catch (error) {
          // A worker that could not start or load its languages is dropped; the next job starts another.
          retire(slot);
          throw error;
        }
        return await job(worker);
      } finally {
        slot.busy = false;
        // Idle workers give their memory back: a long scan's helpers soon, the first once the
        // user seems done with scans for a while.
        if (slots.includes(slot)) retireWhenIdle(slot);
        waiting.shift()?.();
      }
    },
    releaseIdle() {
      const idle = slots.filter((slot) => !slot.busy);
      for (const slot of idle) {
        clearTimeout(slot.idle);
        retire(slot);
      }
      return idle.length;
    },
    async terminate() {
      for (const slot of slots) clearTimeout(slot.idle);
      await Promise.all(slots.splice(0).map(async (slot) => (await slot.started?.catch(() => null))?.terminate()));
    },
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
