// The app <-> worker boundary over random requests: whatever a page (or a buggy or hostile one)
// sends, `request` answers with `ok` or a plain `{code, message}` error, quickly, and never throws.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { StreamFn } from './agent/types.ts';
import type { Method, StackResponse } from '../protocol/stack-api.ts';
import { createStack } from './stack.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { createMemoryUserFiles } from './user-files.ts';
import { openPdfInNode } from './documents/node-pdf.ts';
import { openTestMemory } from '../memory/test-helpers.ts';

const METHODS: Method[] = [
  'mission', 'heartbeat', 'abort', 'get_settings', 'update_settings', 'check_model', 'canvas_interaction', 'answer_permission',
  'list_permission_rules', 'add_permission_rule', 'remove_permission_rule', 'learn_now', 'upload_file', 'export_window',
  'open_window', 'computer', 'read_file',
];

/** A model that ends every turn at once: missions started by random requests finish quickly. */
const quiet: StreamFn = async function* () {
  yield {
    type: 'message',
    message: { id: 'm', type: 'message', role: 'assistant', model: 'm', stop_sequence: null, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } } as never,
  };
};

const value = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.boolean(), fc.constant(null), fc.uint8Array({ maxLength: 64 }), fc.constantFrom(`${'../'.repeat(2)}etc/passwd`, '.os/soul.md', 'documents/a.pdf', 'w_1', 'notes', 'terminal', 'csv', 'start', 'reset'));
const params = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.dictionary(fc.constantFrom('text', 'name', 'bytes', 'path', 'kind', 'title', 'type', 'window_id', 'format', 'action', 'mission_id', 'ask_id', 'allow', 'rule_id', 'endpoint', 'provider', 'model', 'api_key', 'content', 'row_id', 'column', 'value'), value));
// Mostly well-formed envelopes, so most requests reach a handler with random parameters.
const request = fc.record({
  id: fc.oneof({ arbitrary: fc.string({ minLength: 1, maxLength: 8 }), weight: 8 }, { arbitrary: fc.constantFrom<unknown>('', 7, null), weight: 1 }),
  method: fc.oneof({ arbitrary: fc.constantFrom(...METHODS), weight: 8 }, { arbitrary: fc.string({ maxLength: 12 }), weight: 1 }),
  params,
});

const opened: { close(): Promise<void> }[] = [];
afterAll(async () => Promise.all(opened.map((memory) => memory.close())));

describe('stack.request, on random requests', () => {
  it('always answers with ok or a {code, message} error, within a second, and never throws', async () => {
    const memory = await openTestMemory();
    opened.push(memory as unknown as { close(): Promise<void> });
    const stack = await createStack({
      storage: createMemoryStorage(),
      memory,
      files: createMemoryUserFiles(),
      defaults: { provider: 'proxy', endpoint: 'http://proxy.test', model: 'test-model', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true },
      fetch: (async () => Response.json({ ok: true, anthropic: true })) as typeof fetch,
      createStream: () => quiet,
      openPdf: openPdfInNode,
      ocr: async () => ({ text: 'text', confidence: 90 }),
    });
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const answer = await Promise.race([
          (stack.request as (r: unknown) => Promise<StackResponse>)(req),
          new Promise<'hung'>((done) => setTimeout(() => done('hung'), 1000)),
        ]);
        expect(answer).not.toBe('hung');
        const response = answer as StackResponse;
        if (!response.ok) {
          expect(typeof response.error.code).toBe('string');
          expect(typeof response.error.message).toBe('string');
          expect(response.error.message.length).toBeGreaterThan(0);
          // Plain data only: what crosses the worker boundary must survive structured cloning.
          expect(structuredClone(response.error)).toEqual(response.error);
        }
      }),
      { numRuns: 500 },
    );
  }, 120_000);
});
