// tesseract.js for Node (unit tests, the ingest command, benchmarks): the same engine and the
// same English data the app serves, read from node_modules.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createWorker, type Worker as TesseractWorker } from 'tesseract.js';
import { withOcrParameters, type OcrEngine } from './ocr.ts';

const require = createRequire(import.meta.url);

export function createNodeOcr(): OcrEngine & { terminate(): Promise<void> } {
  let worker: Promise<TesseractWorker> | undefined;
  const engine = async (image: Uint8Array) => {
    worker ??= createWorker('eng', 1, {
      langPath: join(dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int'),
      gzip: true,
      cacheMethod: 'none',
    }).then(withOcrParameters);
    const { data } = await (await worker).recognize(Buffer.from(image));
    return { text: data.text.trim(), confidence: data.confidence };
  };
  return Object.assign(engine, {
    async terminate() {
      if (worker) await (await worker).terminate();
    },
  });
}
