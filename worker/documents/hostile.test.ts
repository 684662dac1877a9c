// The hostile-upload corpus (tests/fixtures/hostile.ts) through a real stack, in Node: every file
// is refused with a message naming it and its problem, or stored and then read or named as
// unreadable; nothing escapes documents/, and a document uploaded before is untouched.
import { afterAll, describe, expect, it } from 'vitest';
import { makeHostileCorpus } from '../../tests/fixtures/hostile.ts';
import { SEED } from '../../tests/fixtures/generate.ts';
import { fixture } from '../../tests/support/fixtures.ts';
import { openTestMemory } from '../../memory/test-helpers.ts';
import type { StreamFn } from '../agent/types.ts';
import type { DocumentInfo } from '../../protocol/documents.ts';
import type { StackEvent } from '../../protocol/events.ts';
import { createStack } from '../stack.ts';
import { createMemoryStorage } from '../../storage/json-files.ts';
import { createMemoryUserFiles } from '../user-files.ts';
import { openPdfInNode } from './node-pdf.ts';
import { safeFileName } from './upload.ts';

const silent: StreamFn = async function* () {};
const memories: { close(): Promise<void> }[] = [];
afterAll(async () => Promise.all(memories.map((memory) => memory.close())));

describe('hostile uploads', () => {
  it('are each refused with a specific message or stored and read safely, touching nothing else', async () => {
    const corpus = await makeHostileCorpus(SEED, { pdf: new Uint8Array(fixture('plain-1.pdf')), jpg: new Uint8Array(fixture('plain-1_scan.jpg')) });
    expect(corpus.length).toBeGreaterThanOrEqual(100);
    const memory = await openTestMemory();
    memories.push(memory as unknown as { close(): Promise<void> });
    const files = createMemoryUserFiles();
    let n = 0;
    const stack = await createStack({
      storage: createMemoryStorage(),
      memory,
      files,
      defaults: { provider: 'proxy', endpoint: 'http://proxy.test', model: 'test-model', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true },
      fetch: (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch,
      createStream: () => silent,
      newId: (prefix) => `${prefix}_${++n}`,
      openPdf: openPdfInNode,
      // Stands in for tesseract: the image checks before it are what is under test here.
      ocr: async () => ({ text: 'scanned text', confidence: 90 }),
    });
    const events: StackEvent[] = [];
    await stack.subscribe(0, (batch) => events.push(...batch));
    /** The document's state once the pipeline is done with it. */
    const settled = async (id: string): Promise<DocumentInfo> => {
      for (let i = 0; i < 3000; i++) {
        const done = events.filter((e) => e.type === 'document_updated' && e.document.id === id && e.document.status !== 'processing').at(-1);
        if (done?.type === 'document_updated') return done.document;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`document ${id} was never settled`);
    };

    const good = await stack.request({ id: 'good', method: 'upload_file', params: { name: 'kept.pdf', bytes: new Uint8Array(fixture('plain-2.pdf')) } });
    expect(good.ok && (await settled(good.result.id)).status).toBe('ready');
    const keptBytes = files.files.get('documents/kept.pdf')!.slice();
    const keptText = files.files.get('documents/kept.pdf.txt')!.slice();

    const outcomes: Record<string, number> = {};
    for (const [i, file] of corpus.entries()) {
      const label = `${file.what} (${JSON.stringify(file.name)})`;
      const answer = await stack.request({ id: `h${i}`, method: 'upload_file', params: { name: file.name, bytes: file.bytes } });
      if (!answer.ok) {
        expect(file.outcome === 'refused' || file.outcome === 'stored', `${label} was refused: ${answer.error.message}`).toBe(true);
        expect(answer.error.code, label).toBe('bad_request');
        expect(answer.error.message, label).toContain(safeFileName(file.name));
        if (file.says) expect(answer.error.message, label).toMatch(file.says);
        outcomes.refused = (outcomes.refused ?? 0) + 1;
        continue;
      }
      expect(file.outcome, `${label} was accepted as ${answer.result.mime}`).not.toBe('refused');
      expect(answer.result.path, label).toMatch(/^documents\/[^/]+$/);
      const doc = await settled(answer.result.id);
      if (file.outcome === 'read') expect(doc.status, `${label}: ${doc.error}`).toBe('ready');
      if (file.outcome === 'unreadable') {
        expect(doc.status, label).toBe('failed');
        expect(doc.error, label).toMatch(file.says!);
      }
      if (doc.status === 'failed') {
        // Specific: the file by name and a reason, not a generic failure.
        expect(doc.error, label).toMatch(new RegExp(`^${doc.filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (could not be read as a PDF|has [\\d,]+ pages|is password-protected|could not be read by OCR|inflates to \\d+ MB|is not a (workbook|Word document|TIFF) that can be read|is damaged)`));
      }
      outcomes[doc.status] = (outcomes[doc.status] ?? 0) + 1;
    }
    console.log(`hostile uploads: ${corpus.length} files, ${JSON.stringify(outcomes)}`);
    // Something of each kind happened, and nothing outside documents/ (and the pages it read) was written.
    expect(outcomes.refused).toBeGreaterThan(20);
    expect(outcomes.ready).toBeGreaterThan(5);
    expect(outcomes.failed).toBeGreaterThan(5);
    expect([...files.files.keys()].filter((path) => !/^(documents|ocr)\//.test(path))).toEqual([]);
    expect(files.files.get('documents/kept.pdf')).toEqual(keptBytes);
    expect(files.files.get('documents/kept.pdf.txt')).toEqual(keptText);
    // UTF-16 text is read as the text it is.
    const utf16 = events.find((e) => e.type === 'document_updated' && e.document.filename === 'utf16.txt' && e.document.status === 'ready');
    expect(utf16?.type === 'document_updated' && utf16.document.description).toContain('Rechnung für Müller & Söhne');
  }, 180_000);
});
