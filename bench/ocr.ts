// ocr.page (ms per scanned page in Chromium: the app's pipeline times each page it hands to the
// OCR engine, a User Timing measure read from its worker; the whole way from attaching the file
// to the chat saying it was read, timed in the page, is reported beside it), ocr.vs_native (that over Debian's
// tesseract with one thread on the same pages, the same English model and page segmentation, its
// start-up and model load taken off as ours has the model loaded; the same statistic, p50 per
// page, on both sides; measured in the same run) and ocr.cer (character error rate of the scans
// against the text layer of the fixture PDFs they were printed from). ocr.pages_per_s: a 20-page
// scanned PDF from attaching it to the chat saying it was read, against Debian's tesseract reading
// the same pages (drawn at the scale the app draws them) one after another in one process, one thread.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createCanvas } from '@napi-rs/canvas';
import { OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { chromium, type Page } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { fixture, fixturePath, invoices } from '../tests/support/fixtures.ts';
import { longScannedPdf } from '../tests/support/long-scan.ts';
import { openPdfInNode } from '../worker/documents/node-pdf.ts';
import { OCR_PARAMETERS, ocrPoolSize } from '../worker/documents/ocr.ts';
import { readPdfText, scanScale } from '../worker/documents/pdf-text.ts';
import { checkFields, recallReport } from '../tests/fixtures/recall.ts';
import { percentile, report, round } from './stats.ts';

/** Every generated invoice's scan: five layouts, two of each. */
const SCANS = invoices().map((entry) => entry.id);

const LONG_PAGES = 20;

export async function benchOcr(): Promise<void> {
  const browser = await measureBrowser();
  const native = measureNative();
  const longNative = await measureNativeLong();
  const perSecond = LONG_PAGES / (browser.longMs / 1000);
  report({
    bench: 'ocr.pages_per_s', value: round(perSecond, 2), unit: 'pages/s', n: LONG_PAGES, seconds: round(browser.longMs / 1000, 1), workers: browser.workers,
    ...(longNative ? { native_pages_per_s: round(longNative.perSecond, 2), vs_native: round(perSecond / longNative.perSecond, 2), goal: '>=1.0' } : {}),
    note: 'a 20-page scanned PDF, attach to read; native: tesseract, one process and one thread, the same pages drawn at the same scale, eng, same --psm',
  });
  const p50 = percentile(browser.engineMs, 50);
  const endToEnd = percentile(browser.ms, 50);
  report({ bench: 'ocr.page', value: round(p50), unit: 'ms', n: browser.engineMs.length, p50: round(p50), p95: round(percentile(browser.engineMs, 95)), attach_to_read_p50_ms: round(endToEnd), first_page_ms: round(browser.firstMs) });
  if (native) {
    const perPage = percentile(native.perPage, 50);
    const cli = percentile(native.cli, 50);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    report({
      bench: 'ocr.vs_native', value: round(p50 / perPage), unit: 'ratio', n: native.perPage.length, ours_p50_ms: round(p50), native_p50_ms: round(perPage), goal: '<=1.5',
      ratio_of_totals: round(sum(browser.engineMs) / sum(native.perPage)),
      native_start_and_model_ms: round(native.loadMs), native_cli_p50_ms: round(cli), attach_vs_cli: round(endToEnd / cli),
      note: 'native: a tesseract process per scan, minus its start-up and model load (a blank page), as ours has the model loaded; same model, --psm and one thread',
    });
  }
  const rates: number[] = [];
  for (const id of SCANS) {
    const reference = (await readPdfText(openPdfInNode, new Uint8Array(fixture(`${id}.pdf`)))).pages.join('\n');
    rates.push(characterErrorRate(browser.texts.get(id) ?? '', reference));
  }
  report({ bench: 'ocr.cer', value: round(percentile(rates, 50), 4), unit: 'ratio', n: rates.length, p50: round(percentile(rates, 50), 4), max: round(Math.max(...rates), 4) });
  // The printed fields found in the text the app stored for each scan (recall.test.ts reads the
  // same scans in Node).
  const recall = recallReport(invoices().map((entry) => ({ invoice: entry, checks: checkFields(entry, browser.texts.get(entry.id) ?? '') })));
  report({ bench: 'ocr.field_recall', value: round(recall.overall.recall, 4), unit: 'ratio', n: recall.overall.total, found: recall.overall.found, goal: '>=0.97', missed: recall.misses });
}

async function measureBrowser(): Promise<{ ms: number[]; engineMs: number[]; firstMs: number; texts: Map<string, string>; longMs: number; workers: number }> {
  const fake = await startFakeModel({ port: 0 });
  const stack = await serveStack({ appPort: 4196, proxyPort: 8810, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  const ms: number[] = [];
  const engineMs: number[] = [];
  const texts = new Map<string, string>();
  let firstMs = 0;
  let longMs = 0;
  let workers = 1;
  try {
    const page = await browser.newPage();
    await page.goto(stack.appUrl);
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    // The first page also starts the engine; it is reported apart from the per-page figure.
    for (const [i, id] of [SCANS[0]!, ...SCANS].entries()) {
      const name = i === 0 ? 'warmup_scan.jpg' : `${id}_scan.jpg`;
      const elapsed = await attachUntilRead(page, { name, mimeType: 'image/jpeg', buffer: fixture(`${id}_scan.jpg`) }, `Read ${name}`, 120_000);
      if (i === 0) firstMs = elapsed;
      else {
        ms.push(elapsed);
        texts.set(id, await page.evaluate(async (file) => {
          const root = await navigator.storage.getDirectory();
          const docs = await (await (await root.getDirectoryHandle('stacks')).getDirectoryHandle('default')).getDirectoryHandle('documents');
          return (await (await docs.getFileHandle(`${file}.txt`)).getFile()).text();
        }, name));
      }
    }
    const worker = page.workers().find((w) => w.url().includes('stack-worker'));
    if (!worker) throw new Error('the stack worker was not found');
    const measures = await worker.evaluate(() => performance.getEntriesByName('ocr.page').map((entry) => entry.duration));
    if (measures.length !== SCANS.length + 1) throw new Error(`expected ${SCANS.length + 1} OCR page measures, got ${measures.length}`);
    engineMs.push(...measures.slice(1)); // the first page also started the engine
    // The pool the app sized from what its worker sees.
    const machine = await worker.evaluate(() => ({ cores: navigator.hardwareConcurrency, memory: (navigator as { deviceMemory?: number }).deviceMemory }));
    workers = ocrPoolSize(machine.cores, machine.memory);
    const long = await longScannedPdf(LONG_PAGES);
    longMs = await attachUntilRead(page, { name: 'long-scan.pdf', mimeType: 'application/pdf', buffer: long }, `Read long-scan.pdf: ${LONG_PAGES} pages`, 600_000);
  } finally {
    await browser.close();
    await stack.close();
    await fake.close();
  }
  return { ms, engineMs, firstMs, texts, longMs, workers };
}

/**
 * Attaches a file as the user would and times, in the page, from the file input's `change` (the
 * page has the file) to the frame after the chat's notice `notice` is in it. Timed outside, a
 * Playwright locator's polling added up to 300 ms to each reading (its waits grow to 500 ms).
 */
async function attachUntilRead(page: Page, file: { name: string; mimeType: string; buffer: Buffer }, notice: string, timeout: number): Promise<number> {
  await page.evaluate((wanted) => {
    const timing: { changed?: number; shown?: number } = {};
    (window as unknown as { attachTiming: typeof timing }).attachTiming = timing;
    document.addEventListener('change', () => (timing.changed ??= performance.now()), { capture: true, once: true });
    const observer = new MutationObserver(() => {
      if (![...document.querySelectorAll('[data-role=notice]')].some((node) => node.textContent?.includes(wanted))) return;
      observer.disconnect();
      requestAnimationFrame(() => (timing.shown = performance.now()));
    });
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  }, notice);
  await page.getByLabel('Attach files').setInputFiles([file]);
  await page.locator('[data-role=notice]').filter({ hasText: notice }).waitFor({ timeout });
  const timing = await page.waitForFunction(() => {
    const { changed, shown } = (window as unknown as { attachTiming: { changed?: number; shown?: number } }).attachTiming;
    return changed !== undefined && shown !== undefined ? shown - changed : null;
  });
  return (await timing.jsonValue()) as number;
}

/**
 * Debian's tesseract, one thread, the same eng model and page segmentation as ours; installed
 * when missing and root. Per page: each scan's process, minus what a process spends starting and
 * loading the model (timed on a blank page), since ours has the model loaded already. Median of
 * three runs each.
 */
function measureNative(): { perPage: number[]; cli: number[]; loadMs: number } | null {
  if (!existsSync('/usr/bin/tesseract') && process.getuid?.() === 0) {
    spawnSync('apt-get', ['install', '-y', '-qq', 'tesseract-ocr'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  }
  if (!existsSync('/usr/bin/tesseract')) {
    console.error('ocr.vs_native skipped: Debian tesseract-ocr is not installed');
    return null;
  }
  const tessdata = mkdtempSync(join(tmpdir(), 'tessdata-'));
  const data = join(dirname(createRequire(import.meta.url).resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int/eng.traineddata.gz');
  writeFileSync(join(tessdata, 'eng.traineddata'), gunzipSync(readFileSync(data)));
  const psm = OCR_PARAMETERS.tessedit_pageseg_mode;
  const once = (input: string) => {
    const started = performance.now();
    execFileSync('tesseract', [input, '-', '-l', 'eng', '--oem', '1', '--psm', psm, '--tessdata-dir', tessdata], { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, stdio: ['ignore', 'pipe', 'ignore'] });
    return performance.now() - started;
  };
  const run = (input: string) => percentile([once(input), once(input), once(input)], 50);
  const blank = join(tessdata, 'blank.pgm');
  writeFileSync(blank, Buffer.concat([Buffer.from('P5\n200 200\n255\n'), Buffer.alloc(200 * 200, 255)]));
  const loadMs = run(blank);
  const cli = SCANS.map((id) => run(fixturePath(`${id}_scan.jpg`)));
  return { perPage: cli.map((ms) => ms - loadMs), cli, loadMs };
}

/**
 * Debian's tesseract on the 20-page scan's pages, drawn by pdfjs at the app's scale: one process
 * reading the list of pages in turn, one thread, the model loaded once.
 */
async function measureNativeLong(): Promise<{ perSecond: number } | null> {
  if (!existsSync('/usr/bin/tesseract')) return null;
  const dir = mkdtempSync(join(tmpdir(), 'long-scan-'));
  const doc = await openPdfInNode(new Uint8Array(await longScannedPdf(LONG_PAGES)));
  const list: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const operators = await page.getOperatorList();
    const images = operators.fnArray.flatMap((fn, i) => (fn === OPS.paintImageXObject ? [{ width: Number(operators.argsArray[i][1]), height: Number(operators.argsArray[i][2]) }] : []));
    const viewport = page.getViewport({ scale: scanScale(images, page.getViewport({ scale: 1 }).width) });
    const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    const context = canvas.getContext('2d');
    context.fillStyle = '#fff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    await page.render({ canvas: canvas as unknown as HTMLCanvasElement, canvasContext: context as unknown as CanvasRenderingContext2D, viewport }).promise;
    const file = join(dir, `page-${n}.png`);
    writeFileSync(file, await canvas.encode('png'));
    list.push(file);
  }
  await doc.destroy();
  writeFileSync(join(dir, 'pages.txt'), `${list.join('\n')}\n`);
  const tessdata = mkdtempSync(join(tmpdir(), 'tessdata-'));
  const data = join(dirname(createRequire(import.meta.url).resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int/eng.traineddata.gz');
  writeFileSync(join(tessdata, 'eng.traineddata'), gunzipSync(readFileSync(data)));
  const started = performance.now();
  execFileSync('tesseract', [join(dir, 'pages.txt'), '-', '-l', 'eng', '--oem', '1', '--psm', OCR_PARAMETERS.tessedit_pageseg_mode, '--tessdata-dir', tessdata], { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  return { perSecond: LONG_PAGES / ((performance.now() - started) / 1000) };
}

/** Levenshtein distance over the reference length, whitespace collapsed on both sides. */
export function characterErrorRate(hypothesis: string, reference: string): number {
  const a = hypothesis.replace(/\s+/g, ' ').trim();
  const b = reference.replace(/\s+/g, ' ').trim();
  if (b.length === 0) return a.length === 0 ? 0 : 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]! / b.length;
}
