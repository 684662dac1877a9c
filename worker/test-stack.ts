// Test support: a stack's dependencies for Node tests (in-memory storage and files, a settings
// default pointing at a fake proxy, numbered ids, pdfjs in-process, a canned OCR), overridable.
import type { StackMemory } from '../memory/index.ts';
import { openPdfInNode } from './documents/node-pdf.ts';
import type { StackDeps } from './stack.ts';
import { createMemoryStorage } from './storage.ts';
import { createMemoryUserFiles } from './user-files.ts';

export function testStackDeps(memory: StackMemory, overrides: Partial<StackDeps> & Pick<StackDeps, 'createStream' | 'fetch'>): StackDeps {
  let n = 0;
  return {
    storage: createMemoryStorage(),
    memory,
    files: createMemoryUserFiles(),
    defaults: { provider: 'proxy', endpoint: 'http://proxy.test', model: 'test-model', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local' },
    newId: (prefix) => `${prefix}_${++n}`,
    openPdf: openPdfInNode,
    ocr: async () => ({ text: 'scanned text of a test image', confidence: 90 }),
    ...overrides,
  };
}
