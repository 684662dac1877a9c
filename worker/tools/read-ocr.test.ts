import { describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../memory/index.ts';
import { createMemoryUserFiles } from '../user-files.ts';
import { createReadOcrTool } from './read-ocr.ts';

const context = { signal: new AbortController().signal, tool_use_id: 't' };
const doc = (patch: Partial<DocumentRecord>): DocumentRecord => ({
  id: 'doc_1', filename: 'inv.pdf', path: 'documents/inv.pdf', size: 1, mime: 'application/pdf', status: 'ready', description: 'PDF', pageCount: 3, error: null, createdAt: 0, updatedAt: 0, ...patch,
});

function setup(record: DocumentRecord) {
  const files = createMemoryUserFiles({
    'ocr/doc_1/page-1.txt': new TextEncoder().encode('one'),
    'ocr/doc_1/page-2.txt': new TextEncoder().encode('two'),
    'ocr/doc_1/page-3.txt': new TextEncoder().encode('three'),
  });
  return createReadOcrTool({ findDocument: async (name) => (name === 'inv.pdf' || name === 'doc_1' ? record : undefined), files });
}

describe('read_ocr', () => {
  it('shows the model this schema', () => {
    expect(setup(doc({})).spec).toMatchSnapshot();
  });
  it('returns pages and ranges, marked as the document\'s content', async () => {
    const tool = setup(doc({}));
    expect((await tool.execute({ document: 'inv.pdf', pages: '2' }, context)).content).toBe('<document name="inv.pdf">\n<page number="2" of="3">\ntwo\n</page>\n</document>');
    expect((await tool.execute({ document: 'doc_1', pages: '2-9' }, context)).content).toContain('<page number="3" of="3">\nthree');
    expect((await tool.execute({ document: 'doc_1' }, context)).content).toContain('<page number="1" of="3">');
  });
  it('says why there is no text', async () => {
    expect((await setup(doc({ status: 'failed', error: 'is password-protected' })).execute({ document: 'inv.pdf' }, context)).content).toContain('inv.pdf could not be read: is password-protected');
    expect((await setup(doc({ status: 'uploaded', description: 'scanned (no text layer)' })).execute({ document: 'inv.pdf' }, context)).content).toContain('has no text yet (uploaded). scanned');
    expect((await setup(doc({})).execute({ document: 'nope.pdf' }, context)).content).toContain('No document "nope.pdf"');
    expect((await setup(doc({})).execute({ document: 'inv.pdf', pages: '7' }, context)).content).toContain('inv.pdf has 3 pages.');
    expect((await setup(doc({})).execute({ document: 'inv.pdf', pages: 'two' }, context)).content).toContain('Give one page');
  });
});
