// Entry of a dedicated stack worker: wires one stack to OPFS, the network and comlink.
import * as Comlink from 'comlink';
import wasmUrl from '@journeyapps/wa-sqlite/dist/wa-sqlite.wasm?url';
import { loadSqlite, openOpfsStackMemory } from '../memory/index.ts';
import { createAnthropicStream } from './agent/anthropic.ts';
import { createOpenAIStream } from './agent/openai.ts';
import type { StackApi } from './protocol.ts';
import { DEFAULT_MODEL } from './settings.ts';
import { createStack } from './stack.ts';
import { openOpfsStorage, openStackDirectory } from './storage.ts';
import { createOpfsUserFiles } from './user-files.ts';
import { createBrowserOcr } from './documents/ocr.ts';
import { openPdfInWorker, renderPdfPagesInWorker } from './documents/pdfjs-worker.ts';

const DEFAULT_ENDPOINT = import.meta.env.VITE_PROXY_URL || 'http://127.0.0.1:8787';

// The app names the worker `stack:<id>`; one worker serves one stack.
const stackId = self.name.startsWith('stack:') ? self.name.slice('stack:'.length) : 'default';

async function openStack(): Promise<StackApi> {
  // Memory first: it lays out the stack's folders (.os/, documents/, ...) on a new stack.
  const runtime = await loadSqlite({ wasmUrl });
  const memory = await openOpfsStackMemory({ runtime, stackId });
  const [storage, dir] = await Promise.all([openOpfsStorage(stackId), openStackDirectory(stackId)]);
  return createStack({
    storage,
    files: createOpfsUserFiles(dir),
    memory,
    openPdf: openPdfInWorker,
    renderPdfPages: renderPdfPagesInWorker,
    ocr: createBrowserOcr({ base: new URL('/ocr/', self.location.href).href }),
    defaults: { provider: 'proxy', endpoint: DEFAULT_ENDPOINT, model: DEFAULT_MODEL, heartbeat_minutes: 0, has_api_key: false },
    fetch: (input, init) => fetch(input, init),
    createStream: ({ provider, endpoint, apiKey }) =>
      provider === 'openai' ? createOpenAIStream({ baseURL: endpoint, apiKey }) : createAnthropicStream({ baseURL: endpoint, apiKey: provider === 'anthropic' ? apiKey : null }),
  });
}

const stack = openStack();

// Calls wait for the stack to open; comlink forwards a rejected open as an error to the caller.
const api: StackApi = {
  request: async (request) => (await stack).request(request),
  subscribe: async (afterSeq, listener) => (await stack).subscribe(afterSeq, listener),
  snapshot: async () => (await stack).snapshot(),
};

Comlink.expose(api);
