// The pipeline's choice of OCR engine: Mistral through the proxy when the settings say so, with a
// fall back to the local engine (and the reason on the record) whenever Mistral fails.
import { describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../memory/index.ts';
import { fixture as fixtureFile } from '../../tests/support/fixtures.ts';
import { jpegToPdf } from '../../tests/support/jpeg-pdf.ts';
import type { StackEventBody } from '../../protocol/events.ts';
import type { Settings } from '../../protocol/settings.ts';
import type { TableColumn, TableRow } from '../../protocol/windows.ts';
import { OFFICE_FILES, REPORT_MARKDOWN } from '../../tests/fixtures/office.ts';
import { createMemoryUserFiles } from '../user-files.ts';
import { openPdfInNode } from './node-pdf.ts';
import type { OcrEngine } from './ocr.ts';
import type { PdfPageRenderer } from './pdf-text.ts';
import { memoryDocuments } from './memory-documents.ts';
import { createPipeline, failureReason, pageArtifactPath } from './pipeline.ts';

const fixture = (name: string) => new Uint8Array(fixtureFile(name));
const SCAN = fixture('two-column-2_scan.jpg');

type OcrSettings = Pick<Settings, 'provider' | 'endpoint' | 'ocr_engine'>;
const MISTRAL: OcrSettings = { provider: 'proxy', endpoint: 'http://proxy.test', ocr_engine: 'mistral' };

function mistralAnswer(pages: string[]): Response {
  return Response.json({
    pages: pages.map((markdown, index) => ({ index, markdown, images: [], dimensions: { dpi: 200, height: 1100, width: 850 } })),
    model: 'mistral-ocr-2505',
    usage_info: { pages_processed: pages.length, doc_size_bytes: 1 },
  });
}

function setup(options: { settings?: OcrSettings; answer?: () => Response | Promise<Response>; render?: boolean; noMistralDep?: boolean }) {
  const tables: { title: string; columns: TableColumn[]; rows: TableRow[] }[] = [];
  const files = createMemoryUserFiles();
  const { records, documents } = memoryDocuments();
  const events: StackEventBody[] = [];
  const fetchCalls: { url: string; body: { document: Record<string, string> } }[] = [];
  const localCalls: Uint8Array[] = [];
  const ocr: OcrEngine = async (image) => {
    localCalls.push(image);
    return { text: 'LOCAL TEXT from tesseract', confidence: 87.4 };
  };
  const renderPdfPages: PdfPageRenderer = async (_bytes, onPage) => {
    await onPage(1, 1, new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
  };
  const fetchFn = (async (url: string, init: RequestInit) => {
    fetchCalls.push({ url, body: JSON.parse(init.body as string) });
    if (!options.answer) throw new TypeError('Failed to fetch');
    return options.answer();
  }) as unknown as typeof fetch;
  const pipeline = createPipeline({
    files,
    documents,
    emit: (event) => events.push(event),
    openPdf: openPdfInNode,
    ocr,
    ...(options.render === false ? {} : { renderPdfPages }),
    toInfo: (record) => ({ ...record, page_count: record.pageCount }),
    ...(options.noMistralDep ? {} : { mistralOcr: { settings: () => options.settings ?? MISTRAL, fetch: fetchFn } }),
    openTable: async (title, columns, rows) => void tables.push({ title, columns, rows }),
  });
  async function upload(filename: string, mime: string, bytes: Uint8Array): Promise<DocumentRecord> {
    const path = `documents/${filename}`;
    await files.write(path, bytes);
    const record: DocumentRecord = {
      id: `doc_${records.size + 1}`,
      filename,
      path,
      size: bytes.byteLength,
      mime,
      status: 'uploaded',
      description: 'uploaded by the user',
      pageCount: null,
      error: null,
      createdAt: 0,
      updatedAt: 0,
    };
    records.set(record.id, record);
    pipeline.process(record);
    await pipeline.idle();
    return records.get(record.id)!;
  }
  const text = (path: string) => new TextDecoder().decode(files.files.get(path));
  return { upload, events, fetchCalls, localCalls, text, tables, files };
}

describe('pipeline with Mistral OCR chosen', () => {
  it('sends a scanned PDF to Mistral and saves its pages, with progress', async () => {
    const t = setup({ answer: () => mistralAnswer(['# Invoice\n\nBlue Gum Supplies', 'Total 99.00']) });
    const record = await t.upload('scan.pdf', 'application/pdf', jpegToPdf(SCAN));
    expect(record).toMatchObject({ status: 'ready', pageCount: 2, error: null });
    expect(record.description).toBe('Scanned PDF "scan.pdf", 2 pages, begins "# Invoice" (Mistral OCR)');
    expect(t.text(pageArtifactPath(record.id, 1))).toBe('# Invoice\n\nBlue Gum Supplies');
    expect(t.text(pageArtifactPath(record.id, 2))).toBe('Total 99.00');
    expect(t.text('documents/scan.pdf.txt')).toBe('--- page 1 ---\n# Invoice\n\nBlue Gum Supplies\n\n--- page 2 ---\nTotal 99.00');
    expect(t.localCalls).toHaveLength(0);
    expect(t.fetchCalls).toHaveLength(1);
    expect(t.fetchCalls[0]?.url).toBe('http://proxy.test/v1/ocr');
    expect(t.fetchCalls[0]?.body.document['type']).toBe('document_url');
    expect(t.fetchCalls[0]?.body.document['document_url']).toMatch(/^data:application\/pdf;base64,JVBERi/);
    const progress = t.events.filter((e) => e.type === 'document_progress').map((e) => e.type === 'document_progress' && [e.page, e.pages]);
    // Mistral's pages as they are saved (the look for a text layer the scan lacks shows none).
    expect(progress).toEqual([[1, 2], [2, 2]]);
    expect(t.events.at(-1)).toMatchObject({ type: 'document_updated', document: { status: 'ready' } });
  });

  it('sends a scanned image as an image_url', async () => {
    const t = setup({ answer: () => mistralAnswer(['Blue Gum Supplies\nTotal 99.00']) });
    const record = await t.upload('scan.jpg', 'image/jpeg', SCAN);
    expect(record).toMatchObject({ status: 'ready', pageCount: 1 });
    expect(record.description).toBe('Scanned image "scan.jpg", 1 page, begins "Blue Gum Supplies" (Mistral OCR)');
    expect(t.text(pageArtifactPath(record.id, 1))).toBe('Blue Gum Supplies\nTotal 99.00');
    expect(t.fetchCalls[0]?.body.document['image_url']).toMatch(/^data:image\/jpeg;base64,\/9j\//);
    expect(t.localCalls).toHaveLength(0);
  });

  it('never sends a PDF with a text layer', async () => {
    const t = setup({ answer: () => mistralAnswer(['should not be asked']) });
    const record = await t.upload('plain-1.pdf', 'application/pdf', fixture('plain-1.pdf'));
    expect(record.status).toBe('ready');
    expect(record.description).toMatch(/^PDF "plain-1.pdf", 1 page/);
    expect(t.fetchCalls).toHaveLength(0);
  });

  it.each([
    ['the proxy has no key', () => Response.json({ type: 'error', error: { type: 'proxy_not_configured', message: '...' } }, { status: 503 }), 'the proxy has no Mistral API key (MISTRAL_API_KEY)'],
    ['Mistral refuses', () => Response.json({ message: 'Invalid model' }, { status: 400 }), 'Mistral OCR answered 400: Invalid model'],
    ['the answer is not JSON', () => new Response('oops', { status: 200 }), 'http://proxy.test/v1/ocr answered with something other than Mistral OCR pages'],
    ['the proxy is down', undefined, 'the Stackdocs proxy at http://proxy.test could not be reached'],
    ['Mistral finds no text', () => mistralAnswer(['', '  ']), 'it found no text'],
  ])('falls back to local OCR when %s, and says why', async (_case, answer, why) => {
    const t = setup(answer ? { answer } : {});
    const image = await t.upload('scan.jpg', 'image/jpeg', SCAN);
    expect(image).toMatchObject({ status: 'ready', pageCount: 1, error: null });
    expect(image.description).toBe(`Scanned image "scan.jpg", 1 page, begins "LOCAL TEXT from tesseract" (OCR, 87% confidence, in this browser because Mistral OCR failed: ${why})`);
    expect(t.text(pageArtifactPath(image.id, 1))).toBe('LOCAL TEXT from tesseract');

    const pdf = await t.upload('scan.pdf', 'application/pdf', jpegToPdf(SCAN));
    expect(pdf).toMatchObject({ status: 'ready', pageCount: 1, error: null });
    expect(pdf.description).toBe(`Scanned PDF "scan.pdf", 1 page, begins "LOCAL TEXT from tesseract" (OCR, 87% confidence, in this browser because Mistral OCR failed: ${why})`);
    expect(t.text('documents/scan.pdf.txt')).toBe('--- page 1 ---\nLOCAL TEXT from tesseract');
    expect(t.localCalls).toHaveLength(2);
    expect(t.fetchCalls).toHaveLength(2);
  });

  it('says why a scanned PDF still needs OCR where pages cannot be drawn and Mistral failed', async () => {
    const t = setup({ render: false, answer: () => Response.json({ message: 'Unauthorized' }, { status: 401 }) });
    const record = await t.upload('scan.pdf', 'application/pdf', jpegToPdf(SCAN));
    expect(record.status).toBe('uploaded');
    expect(record.description).toBe('uploaded by the user; scanned (no text layer): its text needs OCR (Mistral OCR failed: Mistral OCR answered 401: Unauthorized)');
  });

  it('reads a scanned PDF even where pages cannot be drawn, when Mistral answers', async () => {
    const t = setup({ render: false, answer: () => mistralAnswer(['Blue Gum Supplies']) });
    const record = await t.upload('scan.pdf', 'application/pdf', jpegToPdf(SCAN));
    expect(record).toMatchObject({ status: 'ready', pageCount: 1, description: 'Scanned PDF "scan.pdf", 1 page, begins "Blue Gum Supplies" (Mistral OCR)' });
  });
});

describe('pipeline with Mistral OCR not in use', () => {
  it.each([
    ['the local engine is chosen', { ...MISTRAL, ocr_engine: 'local' as const }],
    ['the provider is not the proxy', { ...MISTRAL, provider: 'anthropic' as const }],
  ])('reads scans locally, without a word about Mistral, when %s', async (_case, settings) => {
    const t = setup({ settings, answer: () => mistralAnswer(['never']) });
    const record = await t.upload('scan.jpg', 'image/jpeg', SCAN);
    expect(record.description).toBe('Scanned image "scan.jpg", 1 page, begins "LOCAL TEXT from tesseract" (OCR, 87% confidence)');
    expect(t.fetchCalls).toHaveLength(0);
  });

  it('reads scans locally when the stack gives no Mistral access at all', async () => {
    const t = setup({ noMistralDep: true });
    const record = await t.upload('scan.pdf', 'application/pdf', jpegToPdf(SCAN));
    expect(record.description).toBe('Scanned PDF "scan.pdf", 1 page, begins "LOCAL TEXT from tesseract" (OCR, 87% confidence)');
    expect(t.fetchCalls).toHaveLength(0);
  });
});

describe('failureReason', () => {
  it('says what an engine that gave no reason means for the file', () => {
    expect(failureReason(new Error('Invalid PDF structure.'))).toBe('Invalid PDF structure.');
    expect(failureReason('out of memory')).toBe('out of memory');
    expect(failureReason(undefined)).toBe('the image could not be decoded: the file is damaged or cut short');
    expect(failureReason(new Error(''))).toBe('the image could not be decoded: the file is damaged or cut short');
  });
});

describe('office files and TIFF scans', () => {
  const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
  const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

  it('a workbook becomes a table and a CSV per sheet, typed, and its text names both', async () => {
    const t = setup({ noMistralDep: true });
    const record = await t.upload('books.xlsx', XLSX, fixture(OFFICE_FILES.workbook));
    expect(record.status).toBe('ready');
    expect(record.description).toBe('Excel workbook "books.xlsx", 2 sheets: Invoices (4 × 4), Payments (3 × 3); each as a CSV in /workspace/documents/books.xlsx.sheets/');
    expect(t.text('documents/books.xlsx.sheets/Invoices.csv')).toBe('Vendor,Invoice,Date,Total (EUR)\r\nMüller & Söhne GmbH,RE-2026-114,2026-10-02,1234.56\r\nCafé Lumière SARL,F-0098,2026-10-09,89.9\r\nNordwind Logistik AG,NL-77,2026-10-15,15020');
    expect(t.text('documents/books.xlsx.sheets/Payments.csv')).toContain('2026-10-28,Café Lumière SARL,89.9');
    expect(t.tables.map((table) => table.title)).toEqual(['books.xlsx: Invoices', 'books.xlsx: Payments']);
    expect(t.tables[0]!.columns.map((column) => `${column.label}:${column.type}`)).toEqual(['Vendor:text', 'Invoice:text', 'Date:date', 'Total (EUR):number']);
    expect(t.tables[0]!.rows[0]).toEqual({ id: 'r1', cells: { vendor: 'Müller & Söhne GmbH', invoice: 'RE-2026-114', date: '2026-10-02', total_eur: 1234.56 } });
    expect(t.text('documents/books.xlsx.txt')).toContain('Sheet "Payments" (/workspace/documents/books.xlsx.sheets/Payments.csv):');
  });

  it('a Word document becomes markdown text', async () => {
    const t = setup({ noMistralDep: true });
    const record = await t.upload('report.docx', DOCX, fixture(OFFICE_FILES.report));
    expect(record).toMatchObject({ status: 'ready', pageCount: 1 });
    expect(record.description).toMatch(/^Word document "report.docx", \d+ words, begins "Quarterly report"$/);
    expect(t.text('documents/report.docx.txt').trim().split('\n\n')).toEqual(REPORT_MARKDOWN);
  });

  it('a TIFF scan is read by OCR page by page, with progress', async () => {
    const t = setup({ noMistralDep: true });
    const record = await t.upload('scan.tiff', 'image/tiff', fixture(OFFICE_FILES.tiff));
    expect(record).toMatchObject({ status: 'ready', pageCount: 3 });
    expect(t.localCalls).toHaveLength(3);
    expect(t.events.filter((event) => event.type === 'document_progress').map((event) => (event as { page: number }).page)).toEqual([1, 2, 3]);
    expect(t.text(pageArtifactPath(record.id, 3))).toBe('LOCAL TEXT from tesseract');
    expect(record.description).toMatch(/^Scanned TIFF "scan.tiff", 3 pages/);
    // Decoding its three pages: 3.7 s alone, 23 s in a whole run beside the real OCR tests on two busy cores.
  }, 60_000);

  it('a damaged workbook fails with its reason, and nothing is opened', async () => {
    const t = setup({ noMistralDep: true });
    const record = await t.upload('broken.xlsx', XLSX, fixture(OFFICE_FILES.report));
    expect(record.status).toBe('failed');
    expect(record.error).toMatch(/^broken.xlsx is not a workbook that can be read \(.+\)\. Open it in Excel or LibreOffice and save it again as \.xlsx\.$/);
    expect(t.tables).toEqual([]);
  });
});

describe('the language scans are read in', () => {
  function withLanguages(reply: (languages: string) => string, setting: () => 'auto' | 'deu' | 'eng' = () => 'auto') {
    const files = createMemoryUserFiles();
    const { records, documents } = memoryDocuments();
    const asked: string[] = [];
    const pipeline = createPipeline({
      files,
      documents,
      emit: () => {},
      openPdf: openPdfInNode,
      ocr: async (_image, languages = 'eng') => {
        asked.push(languages);
        return { text: reply(languages), confidence: 90 };
      },
      toInfo: (record) => ({ ...record, page_count: record.pageCount }),
      ocrLanguage: setting,
    });
    const read = async (language?: 'auto' | 'deu' | 'eng' | 'fra') => {
      const record: DocumentRecord = { id: 'd1', filename: 'scan.png', path: 'documents/scan.png', size: 1, mime: 'image/png', status: 'uploaded', description: '', pageCount: null, error: null, createdAt: 0, updatedAt: 0 };
      await files.write(record.path, new Uint8Array([1]));
      records.set(record.id, record);
      pipeline.process(record, language ? { language } : {});
      await pipeline.idle();
      return new TextDecoder().decode(await files.read(`${record.path}.txt`));
    };
    return { read, asked };
  }
  const german = 'Rechnung Nr. 12 Datum 06.10.2025 Menge Einzelpreis Betrag Zwischensumme MwSt Gesamt Bitte zahlbar';

  it('auto: English first, then again in German when the page plainly is German', async () => {
    const t = withLanguages((languages) => (languages === 'eng' ? `Miiller & Sohne GmbH ${german}` : `Müller & Söhne GmbH ${german}`));
    expect(await t.read()).toContain('Müller & Söhne GmbH');
    expect(t.asked).toEqual(['eng', 'deu+eng']);
  });

  it('auto: an English page is read once', async () => {
    const t = withLanguages(() => 'Invoice number INV-1 date quantity unit price amount subtotal GST total due for payment');
    await t.read();
    expect(t.asked).toEqual(['eng']);
  });

  it('a language named in Settings, or for one document ("read again in"), is read in at once', async () => {
    const t = withLanguages(() => 'text', () => 'deu');
    await t.read();
    await t.read('fra');
    await t.read();
    expect(t.asked).toEqual(['deu+eng', 'fra+eng', 'deu+eng']);
  });
});

describe('a long scan, pages read at once', () => {
  /** A scanned PDF of `count` pages through an engine reading `parallel` at once, each page taking `delay(page)` ms. */
  function longScan(count: number, parallel: number, delay: (page: number) => number, fail?: number) {
    const files = createMemoryUserFiles();
    const { records, documents } = memoryDocuments();
    const events: StackEventBody[] = [];
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const ocr: OcrEngine = Object.assign(
      async (image: Uint8Array) => {
        const page = image[0]!;
        running++;
        most = Math.max(most, running);
        log.push(`start ${page}`);
        await new Promise((resolve) => setTimeout(resolve, delay(page)));
        running--;
        log.push(`end ${page}`);
        if (page === fail) throw new Error(`page ${page} could not be read`);
        return { text: `page ${page} text ${page === 1 ? 'Rechnung Datum Menge Einzelpreis Betrag Zwischensumme MwSt Gesamt Bitte zahlbar' : ''}`.trim(), confidence: 80 + page, words: [{ text: `w${page}`, confidence: 80 + page }] };
      },
      { parallel },
    );
    const renderPdfPages: PdfPageRenderer = async (_bytes, onPage) => {
      for (let page = 1; page <= count; page++) {
        log.push(`drawn ${page}`);
        await onPage(page, count, new Uint8Array([page]));
      }
    };
    const pipeline = createPipeline({
      files,
      documents,
      emit: (event) => events.push(event),
      openPdf: openPdfInNode,
      ocr,
      renderPdfPages,
      toInfo: (record) => ({ ...record, page_count: record.pageCount }),
      ocrLanguage: () => 'auto',
    });
    return { files, records, documents, events, log, pipeline, most: () => most };
  }

  it('reads the first page alone, then as many as the engine reads at once, and keeps page order', async () => {
    // Later pages finish out of order (even pages are slow).
    const t = longScan(7, 2, (page) => (page % 2 ? 5 : 30));
    const pages: string[] = [];
    await readAllPages(t, pages);
    // Two read at once and one drawn ahead waits in the engine's queue (its pool holds it).
    expect(t.most()).toBe(3);
    // Page 2 starts only after page 1 ended: the first page's language guides the rest.
    expect(t.log.indexOf('start 2')).toBeGreaterThan(t.log.indexOf('end 1'));
    // Pages are drawn while others are read, no more than one ahead of the engine.
    expect(t.log.indexOf('drawn 4')).toBeLessThan(t.log.indexOf('end 2'));
    expect(pages).toEqual(Array.from({ length: 7 }, (_, i) => `page ${i + 1} text`));
    // Progress counts pages done, in order, whatever page finished; the look for a text layer that
    // a scan does not have shows none (the bar would run to the end, then start again).
    const progress = t.events.flatMap((event) => (event.type === 'document_progress' ? [`${event.page}/${event.pages}`] : []));
    expect(progress).toEqual(['1/7', '2/7', '3/7', '4/7', '5/7', '6/7', '7/7']);
  });

  it('fails the document with the failed page\'s reason once the pages being read have ended', async () => {
    const t = longScan(6, 2, () => 5, 3);
    const record = await processScan(t);
    expect(record.status).toBe('failed');
    expect(record.error).toMatch(/page 3 could not be read/);
    expect(t.log.filter((line) => line.startsWith('start')).length).toBe(t.log.filter((line) => line.startsWith('end')).length);
  });
});

async function processScan(t: { files: ReturnType<typeof createMemoryUserFiles>; records: Map<string, DocumentRecord>; pipeline: ReturnType<typeof createPipeline> }) {
  // A PDF with no text layer: the scanned invoice, as a one-image PDF (the renderer above draws the pages).
  const bytes = jpegToPdf(SCAN);
  const record: DocumentRecord = { id: 'long', filename: 'long.pdf', path: 'documents/long.pdf', size: bytes.byteLength, mime: 'application/pdf', status: 'uploaded', description: '', pageCount: null, error: null, createdAt: 0, updatedAt: 0 };
  await t.files.write(record.path, bytes);
  t.records.set(record.id, record);
  t.pipeline.process(record);
  await t.pipeline.idle();
  return t.records.get(record.id)!;
}

async function readAllPages(t: Parameters<typeof processScan>[0], pages: string[]) {
  const record = await processScan(t);
  expect(record.status, record.error ?? '').toBe('ready');
  expect(record.pageCount).toBe(7);
  for (let page = 1; page <= 7; page++) pages.push(new TextDecoder().decode(await t.files.read(pageArtifactPath(record.id, page))).replace(/ Rechnung.*$/, ''));
}
