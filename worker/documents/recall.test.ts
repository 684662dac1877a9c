// Field recall on the project's generated scans, read by the document pipeline itself (tesseract
// in Node, the same data and settings as the browser's, languages chosen automatically): how many
// of each invoice's printed fields come out in the text, per layout and overall. Printed for
// docs/performance.md; the floor below is what the pipeline reaches today, so a change that loses
// fields fails here.
import { afterAll, describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../memory/index.ts';
import { checkFields, recallReport } from '../../tests/fixtures/recall.ts';
import { fixture, invoices } from '../../tests/support/fixtures.ts';
import { createMemoryUserFiles } from '../user-files.ts';
import { memoryDocuments } from './memory-documents.ts';
import { createNodeOcr } from './node-ocr.ts';
import { openPdfInNode } from './node-pdf.ts';
import { createPipeline } from './pipeline.ts';

const ocr = createNodeOcr();
afterAll(() => ocr.terminate());

describe('field recall on the generated scans', () => {
  it('reads the printed fields of every layout, accented names exact', { timeout: 180_000 }, async () => {
    const files = createMemoryUserFiles();
    const { records, documents } = memoryDocuments();
    const pipeline = createPipeline({
      files,
      documents,
      emit: () => {},
      openPdf: openPdfInNode,
      ocr,
      toInfo: (record) => ({ ...record, page_count: record.pageCount }),
      ocrLanguage: () => 'auto',
    });
    const results = [];
    for (const invoice of invoices()) {
      const path = `documents/${invoice.files.scan}`;
      await files.write(path, new Uint8Array(fixture(invoice.files.scan)));
      const record: DocumentRecord = { id: invoice.id, filename: invoice.files.scan, path, size: 0, mime: 'image/jpeg', status: 'uploaded', description: '', pageCount: null, error: null, createdAt: 0, updatedAt: 0 };
      records.set(record.id, record);
      pipeline.process(record);
      await pipeline.idle();
      expect(records.get(record.id)!.status, records.get(record.id)!.error ?? '').toBe('ready');
      results.push({ invoice, checks: checkFields(invoice, new TextDecoder().decode(await files.read(`${path}.txt`))) });
    }
    const report = recallReport(results);
    const line = (name: string, entry: { found: number; total: number; recall: number }) => `${name} ${entry.found}/${entry.total} (${(entry.recall * 100).toFixed(1)}%)`;
    console.log(`field recall on scans: ${[...Object.entries(report.byLayout).map(([layout, entry]) => line(layout, entry)), line('overall', report.overall)].join(', ')}`);
    console.log(`missed: ${JSON.stringify(report.misses)}`);
    // The German invoices' accented vendor names come out exact.
    for (const { invoice, checks } of results.filter(({ invoice }) => invoice.language === 'de')) {
      expect(checks.find((check) => check.field === 'vendor'), invoice.id).toMatchObject({ found: true });
    }
    expect(report.overall.recall).toBeGreaterThanOrEqual(0.9);
  });
});
