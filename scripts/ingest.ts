// `npm run ingest -- FILES... --out DIR`: runs the app's document pipeline code headless (pdfjs
// text layer, tesseract.js OCR with the same language data and choice) and writes, per file, the page texts,
// the assembled text and a JSON summary (text, pages, timings), so accuracy can be measured
// outside the UI.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { detectLanguage, tesseractLanguages } from '../worker/documents/languages.ts';
import { createNodeOcr } from '../worker/documents/node-ocr.ts';
import { openPdfInNode } from '../worker/documents/node-pdf.ts';
import { assemble, hasTextLayer, PdfReadError, readPdfText } from '../worker/documents/pdf-text.ts';
import { checkUpload, UploadError } from '../worker/documents/upload.ts';

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? args[outAt + 1] : undefined;
const files = args.filter((arg, i) => arg !== '--out' && i !== outAt + 1);
if (!out || files.length === 0) {
  console.error('Usage: npm run ingest -- FILE... --out DIR');
  process.exit(2);
}

const ocr = createNodeOcr();
let failed = 0;
try {
  for (const file of files) {
    const started = performance.now();
    const name = basename(file);
    const dir = join(out, name);
    mkdirSync(dir, { recursive: true });
    try {
      const bytes = new Uint8Array(readFileSync(file));
      const { mime } = await checkUpload(name, bytes);
      let pages: string[];
      let method: string;
      if (mime === 'application/pdf') {
        const text = await readPdfText(openPdfInNode, bytes);
        if (!hasTextLayer(text)) throw new Error('is a scanned PDF without a text layer; OCR of PDF pages is not built yet');
        pages = text.pages;
        method = 'pdf-text-layer';
      } else if (mime.startsWith('image/')) {
        // The app's automatic choice: English first, again in another language when the page plainly is one.
        let result = await ocr(bytes, 'eng');
        const language = detectLanguage(result.text);
        if (language) result = await ocr(bytes, tesseractLanguages(language));
        pages = [result.text];
        method = `tesseract.js, ${tesseractLanguages(language ?? 'eng')} (confidence ${Math.round(result.confidence)}%)`;
      } else {
        pages = [new TextDecoder().decode(bytes)];
        method = 'text';
      }
      pages.forEach((page, i) => writeFileSync(join(dir, `page-${i + 1}.txt`), page));
      const text = assemble({ pages });
      writeFileSync(join(dir, `${name}.txt`), text);
      const summary = { file, mime, method, pages: pages.length, ms: Math.round(performance.now() - started), text };
      writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
      console.log(`${name}: ${pages.length} page(s) by ${method} in ${summary.ms} ms`);
    } catch (error) {
      failed++;
      const reason = error instanceof UploadError || error instanceof PdfReadError ? error.message : (error as Error).message;
      writeFileSync(join(dir, 'summary.json'), `${JSON.stringify({ file, error: reason }, null, 2)}\n`);
      console.error(`${name}: ${reason}`);
    }
  }
} finally {
  await ocr.terminate();
}
process.exit(failed ? 1 : 0);
