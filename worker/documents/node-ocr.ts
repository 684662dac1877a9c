// tesseract.js for Node (unit tests, the ingest command, benchmarks): the same engine and the
// same language data the app serves, read from node_modules (gathered into one folder, which is
// how tesseract.js looks for them).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createWorker } from 'tesseract.js';
import { OCR_LANGUAGES } from './languages.ts';
import { OCR_OUTPUT, readUpright, workerPool, type OcrEngine } from './ocr.ts';

const require = createRequire(import.meta.url);

/** A folder holding every shipped language's data, copied from its package once. */
function languageFolder(): string {
  const folder = join(dirname(require.resolve('tesseract.js/package.json')), '..', '.cache', 'stackdocs-tessdata');
  mkdirSync(folder, { recursive: true });
  for (const code of Object.keys(OCR_LANGUAGES)) {
    const target = join(folder, `${code}.traineddata.gz`);
    if (!existsSync(target)) copyFileSync(join(dirname(require.resolve(`@tesseract.js-data/${code}/package.json`)), '4.0.0_best_int', `${code}.traineddata.gz`), target);
  }
  return folder;
}

/** The Node engine: `size` tesseract workers (one unless asked), ended with terminate(). */
export function createNodeOcr(size = 1): OcrEngine & { terminate(): Promise<void> } {
  const pool = workerPool(size, (languages) => createWorker(languages, 1, { langPath: languageFolder(), gzip: true, cacheMethod: 'none' }));
  const engine = readUpright((image, languages, options) => pool.run(languages, async (worker) => (await worker.recognize(Buffer.from(image), options, OCR_OUTPUT)).data));
  return Object.assign(engine, { parallel: size, terminate: () => pool.terminate() });
}
