// Field recall on the project's generated scans, read by the document pipeline itself (tesseract
// in Node, the same data and settings as the browser's, languages chosen automatically): how many
// of each invoice's printed fields come out in the text, per layout and overall. Printed for
// docs/performance.md; the floor below is what the pipeline reaches today, so a change that loses
// fields fails here.
import { afterAll, describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../memory/index.ts';
import { SKEWED_SCANS, TURNED_SCANS } from '../../tests/fixtures/generate.ts';
import { checkFields, recallReport, type FieldCheck } from '../../tests/fixtures/recall.ts';
import { fixture, invoice as invoiceById, invoices, type Invoice } from '../../tests/support/fixtures.ts';
import { createMemoryUserFiles } from '../user-files.ts';
import { memoryDocuments } from './memory-documents.ts';
import { createNodeOcr } from './node-ocr.ts';
import { openPdfInNode } from './node-pdf.ts';
import { createPipeline } from './pipeline.ts';

const ocr = createNodeOcr();
afterAll(() => ocr.terminate());

/** Reads scans through a pipeline of their own, as the app does; each read gives its text and its record. */
function scanReader() {
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
  return async (id: string, file: string) => {
    const path = `documents/${file}`;
    await files.write(path, new Uint8Array(fixture(file)));
    const record: DocumentRecord = { id: `${id}:${file}`, filename: file, path, size: 0, mime: 'image/jpeg', status: 'uploaded', description: '', pageCount: null, error: null, createdAt: 0, updatedAt: 0 };
    records.set(record.id, record);
    pipeline.process(record);
    await pipeline.idle();
    const read = records.get(record.id)!;
    expect(read.status, read.error ?? '').toBe('ready');
    return { text: new TextDecoder().decode(await files.read(`${path}.txt`)), record: read };
  };
}

const line = (name: string, entry: { found: number; total: number; recall: number }) => `${name} ${entry.found}/${entry.total} (${(entry.recall * 100).toFixed(1)}%)`;

describe('field recall on the generated scans', () => {
  const upright: { invoice: Invoice; checks: FieldCheck[] }[] = [];
  /** The upright scans' report for the invoices in `set`, to hold a turned or skewed set against. */
  const uprightOf = (set: { invoice: Invoice }[]) => recallReport(upright.filter((entry) => set.some((other) => other.invoice.id === entry.invoice.id)));

  it('reads the printed fields of every layout, accented names exact', { timeout: 360_000 }, async () => {
    const read = scanReader();
    for (const invoice of invoices()) {
      const { text } = await read(invoice.id, invoice.files.scan);
      upright.push({ invoice, checks: checkFields(invoice, text) });
    }
    const report = recallReport(upright);
    console.log(`field recall on scans: ${[...Object.entries(report.byLayout).map(([layout, entry]) => line(layout, entry)), line('overall', report.overall)].join(', ')}`);
    console.log(`missed: ${JSON.stringify(report.misses)}`);
    // The German invoices' accented vendor names come out exact.
    for (const { invoice, checks } of upright.filter(({ invoice }) => invoice.language === 'de')) {
      expect(checks.find((check) => check.field === 'vendor'), invoice.id).toMatchObject({ found: true });
    }
    expect(report.overall.recall).toBeGreaterThanOrEqual(0.97);
  });

  it('reads a scan turned a quarter or a half turn as well as the upright scan, and says it turned it', { timeout: 360_000 }, async () => {
    expect(upright, 'the upright scans are read first').toHaveLength(invoices().length);
    const read = scanReader();
    const turned: typeof upright = [];
    for (const { invoice: id, file, turn } of TURNED_SCANS) {
      const invoice = invoiceById(id);
      const { text, record } = await read(id, file);
      turned.push({ invoice, checks: checkFields(invoice, text) });
      // Set upright by turning it back: a page lying 90° clockwise is read turned 270°.
      expect(record.description, file).toContain(`read turned ${(360 - turn) % 360}°`);
    }
    const [base, report] = [uprightOf(turned), recallReport(turned)];
    console.log(`field recall, turned scans: ${line('upright', base.overall)}, ${line('turned', report.overall)}; missed turned: ${JSON.stringify(report.misses)}`);
    expect(report.overall.recall).toBeGreaterThanOrEqual(base.overall.recall - 0.01);
  });

  it('reads a scan skewed 3° within a point of the upright scan', { timeout: 360_000 }, async () => {
    expect(upright, 'the upright scans are read first').toHaveLength(invoices().length);
    const read = scanReader();
    const skewed: typeof upright = [];
    for (const { invoice: id, file } of SKEWED_SCANS) {
      const invoice = invoiceById(id);
      const { text, record } = await read(id, file);
      skewed.push({ invoice, checks: checkFields(invoice, text) });
      expect(record.description, file).not.toContain('turned');
    }
    const [base, report] = [uprightOf(skewed), recallReport(skewed)];
    console.log(`field recall, skewed 3°: ${line('upright', base.overall)}, ${line('skewed', report.overall)}; missed skewed: ${JSON.stringify(report.misses)}`);
    expect(report.overall.recall).toBeGreaterThanOrEqual(base.overall.recall - 0.01);
  });
});
