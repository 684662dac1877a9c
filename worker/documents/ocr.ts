// OCR with tesseract.js, offline: its worker script, wasm cores and English data are served by
// the app itself (under /ocr/, precached). One tesseract worker is kept while documents come.
import { createWorker, type Worker as TesseractWorker } from 'tesseract.js';

export interface OcrResult {
  text: string;
  /** 0..100, tesseract's mean word confidence. */
  confidence: number;
}

export type OcrEngine = (image: Uint8Array) => Promise<OcrResult>;

export interface OcrPaths {
  /** Directory URL holding worker.min.js, the tesseract-core*.wasm.js cores and eng.traineddata.gz. */
  base: string;
}

/** The browser engine; each call recognises one page image (PNG, JPEG, WebP, BMP). */
export function createBrowserOcr(paths: OcrPaths): OcrEngine {
  let worker: Promise<TesseractWorker> | undefined;
  return async (image) => {
    worker ??= createWorker('eng', 1, {
      workerPath: `${paths.base}worker.min.js`,
      corePath: paths.base,
      langPath: paths.base,
      workerBlobURL: false,
      gzip: true,
      cacheMethod: 'none',
    });
    const { data } = await (await worker).recognize(new Blob([image as Uint8Array<ArrayBuffer>]));
    return { text: data.text.trim(), confidence: data.confidence };
  };
}
