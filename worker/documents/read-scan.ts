// Scans: images, TIFFs and PDFs without a text layer. Mistral OCR reads them through the proxy
// when the user chose it; else, or when it fails, the local engine does (ocr-pages.ts).
import type { DocumentRecord } from '../../memory/index.ts';
import { MistralOcrError, readWithMistral } from './mistral-ocr.ts';
import { turnNote } from './ocr.ts';
import { readTiffPages } from './office.ts';
import { ocrPages, recognise } from './ocr-pages.ts';
import { assemble, describeText } from './pdf-text.ts';
import { failed, failureReason, pageArtifactPath, saveWords, type ReadingContext } from './reading.ts';

/**
 * Mistral's pages when the user chose Mistral OCR and it read the document; `{ failed }` with
 * the reason when it was chosen and did not; null when it was not chosen. Never throws.
 */
export async function viaMistral(ctx: ReadingContext, record: DocumentRecord, bytes: Uint8Array): Promise<{ pages: string[] } | { failed: string } | null> {
  const { deps } = ctx;
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
export async function savePages(ctx: ReadingContext, record: DocumentRecord, pages: string[], description: string) {
  for (const [i, text] of pages.entries()) {
    await ctx.deps.files.write(pageArtifactPath(record.id, i + 1), text);
    ctx.deps.emit({ type: 'document_progress', document_id: record.id, page: i + 1, pages: pages.length });
  }
  await ctx.deps.files.write(`${record.path}.txt`, assemble({ pages }));
  await ctx.update(record.id, { status: 'ready', pageCount: pages.length, description, error: null });
}

/** What the description says about the engine: local OCR's confidence, and why not Mistral. */
function localOcrNote(confidence: number, mistralFailed: string | null, turned: string | null = null): string {
  const base = `OCR, ${Math.round(confidence)}% confidence${turned ? `, ${turned}` : ''}`;
  return mistralFailed === null ? `(${base})` : `(${base}, in this browser because Mistral OCR failed: ${mistralFailed})`;
}

/** The assembled text beside the original, and the record ready with what was read and how. */
async function finishOcr(ctx: ReadingContext, record: DocumentRecord, pages: string[], confidence: number, kind: string, mistralFailed: string | null, turned: string | null) {
  await ctx.deps.files.write(`${record.path}.txt`, assemble({ pages }));
  await ctx.update(record.id, {
    status: 'ready',
    pageCount: pages.length,
    description: `${describeText(record.filename, { pages }).replace(/^PDF/, kind)} ${localOcrNote(confidence, mistralFailed, turned)}`,
    error: null,
  });
}

/** A scanned PDF: each page drawn and read by OCR. */
export async function ocrPdf(ctx: ReadingContext, record: DocumentRecord, bytes: Uint8Array, mistralFailed: string | null) {
  const { pages, confidence, turned } = await ocrPages(ctx, record, (onPage) => ctx.deps.renderPdfPages!(bytes, onPage));
  await finishOcr(ctx, record, pages, confidence, 'Scanned PDF', mistralFailed, turned);
}

/** A TIFF scan (office scanners' default, often many pages): each page read by OCR as it is decoded. */
export async function readTiff(ctx: ReadingContext, record: DocumentRecord) {
  await ctx.update(record.id, { status: 'processing' });
  try {
    const bytes = await ctx.deps.files.read(record.path);
    const { pages, confidence, turned } = await ocrPages(ctx, record, (onPage) => readTiffPages(bytes, onPage));
    if (!pages.some((page) => page.trim())) {
      await ctx.update(record.id, { status: 'failed', error: `${record.filename}: no text was found on its ${pages.length} page${pages.length === 1 ? '' : 's'}.` });
      return;
    }
    await finishOcr(ctx, record, pages, confidence, 'Scanned TIFF', null, turned);
  } catch (error) {
    await failed(ctx, record, error);
  }
}

/** A scanned image (PNG, JPEG, WebP): one page. */
export async function readImage(ctx: ReadingContext, record: DocumentRecord) {
  const { deps } = ctx;
  await ctx.update(record.id, { status: 'processing' });
  try {
    deps.emit({ type: 'document_progress', document_id: record.id, page: 0, pages: 1 });
    const bytes = await deps.files.read(record.path);
    const remote = await viaMistral(ctx, record, bytes);
    if (remote && 'pages' in remote) {
      const text = remote.pages.join('\n\n');
      await savePages(ctx, record, [text], `${describeText(record.filename, { pages: [text] }).replace(/^PDF/, 'Scanned image')} (Mistral OCR)`);
      return;
    }
    const mistralFailed = remote === null ? null : remote.failed;
    const result = await recognise(ctx, bytes);
    if (!result.text) {
      await ctx.update(record.id, { status: 'failed', error: `${record.filename}: no text was found in the image.` });
      return;
    }
    await deps.files.write(pageArtifactPath(record.id, 1), result.text);
    await deps.files.write(`${record.path}.txt`, assemble({ pages: [result.text] }));
    await saveWords(ctx, record, [result.words ?? []]);
    deps.emit({ type: 'document_progress', document_id: record.id, page: 1, pages: 1 });
    await ctx.update(record.id, {
      status: 'ready',
      pageCount: 1,
      description: `${describeText(record.filename, { pages: [result.text] }).replace(/^PDF/, 'Scanned image')} ${localOcrNote(result.confidence, mistralFailed, turnNote(result.rotation))}`,
      error: null,
    });
  } catch (error) {
    await ctx.update(record.id, { status: 'failed', error: `${record.filename} could not be read by OCR (${failureReason(error)}).` });
  }
}
