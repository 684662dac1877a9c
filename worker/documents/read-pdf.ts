// A PDF: its text layer when it has one, else read as a scan (read-scan.ts).
import type { DocumentRecord } from '../../memory/index.ts';
import { assemble, describeText, hasTextLayer, pageHasText, PdfReadError, readPdfText } from './pdf-text.ts';
import { failureReason, pageArtifactPath, type ReadingContext } from './reading.ts';
import { ocrPdf, savePages, viaMistral } from './read-scan.ts';

export async function readPdf(ctx: ReadingContext, record: DocumentRecord) {
  const { deps } = ctx;
  await ctx.update(record.id, { status: 'processing' });
  try {
    const bytes = await deps.files.read(record.path);
    // Progress through the text layer while its pages have text; a scan's shows when OCR reads it.
    let scanned = false;
    const text = await readPdfText(deps.openPdf, bytes, (page, pages, pageText) => {
      scanned ||= !pageHasText(pageText);
      if (!scanned) deps.emit({ type: 'document_progress', document_id: record.id, page, pages });
    });
    if (!hasTextLayer(text)) {
      const remote = await viaMistral(ctx, record, bytes);
      if (remote && 'pages' in remote) {
        await savePages(ctx, record, remote.pages, `${describeText(record.filename, { pages: remote.pages }).replace(/^PDF/, 'Scanned PDF')} (Mistral OCR)`);
        return;
      }
      const mistralFailed = remote === null ? null : remote.failed;
      if (!deps.renderPdfPages) {
        const why = mistralFailed === null ? '' : ` (Mistral OCR failed: ${mistralFailed})`;
        await ctx.update(record.id, { status: 'uploaded', pageCount: text.pages.length, description: `${record.description}; scanned (no text layer): its text needs OCR${why}` });
        return;
      }
      await ocrPdf(ctx, record, bytes, mistralFailed);
      return;
    }
    for (const [i, page] of text.pages.entries()) await deps.files.write(pageArtifactPath(record.id, i + 1), page);
    await deps.files.write(`${record.path}.txt`, assemble(text));
    await ctx.update(record.id, { status: 'ready', pageCount: text.pages.length, description: describeText(record.filename, text), error: null });
  } catch (error) {
    const reason = error instanceof PdfReadError ? error.message : `could not be processed (${failureReason(error)})`;
    await ctx.update(record.id, { status: 'failed', error: `${record.filename} ${reason}.` });
  }
}
