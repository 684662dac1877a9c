// Entry of a dedicated stack worker: wires one stack to OPFS, the network and comlink.
import * as Comlink from 'comlink';
import wasmUrl from '@journeyapps/wa-sqlite/dist/wa-sqlite.wasm?url';
import { loadSqlite, openOpfsStackMemory, opfsSnapshotPath } from '../memory/index.ts';
import { createOpenAIStream } from './agent/openai.ts';
import { streamOnFirstCall } from './agent/stream-on-first-call.ts';
import type { StackApi } from './protocol.ts';
import { DEFAULT_ENDPOINTS, DEFAULT_MODEL } from './settings.ts';
import { vmImageBase } from 'virtual:vm-image';
import { appUrl } from './app-root.ts';
import type { VmApi } from '../vm/protocol.ts';
import { stackStoredImage } from '../vm/stored-image.ts';
import { recipeOfImageBase } from './stack-file/format.ts';
import { createComputer, type Computer } from './computer.ts';
import { createStack } from './stack.ts';
import { openDeviceStorage, openOpfsStorage, openStackDirectory } from './storage.ts';
import { deviceCredentials, deviceLabel } from './device.ts';
import { createOpfsUserFiles } from './user-files.ts';
import { createBrowserOcr } from './documents/ocr.ts';

// The proxy the build was made for; else the local one, but only for a page served from this
// machine. Elsewhere (a static host with no proxy) the default is the user's own key, which works
// with no server at all once they enter it.
const ON_THIS_MACHINE = /^(localhost|127\.0\.0\.1|\[::1\])$/.test(self.location.hostname);
const PROXY_URL = import.meta.env.VITE_PROXY_URL || (ON_THIS_MACHINE ? 'http://127.0.0.1:8787' : '');
const DEFAULT_CONNECTION = PROXY_URL ? { provider: 'proxy' as const, endpoint: PROXY_URL } : { provider: 'anthropic' as const, endpoint: DEFAULT_ENDPOINTS.anthropic };

// The app names the worker `stack:<id>`; one worker serves one stack.
const stackId = self.name.startsWith('stack:') ? self.name.slice('stack:'.length) : 'default';

let computer: Computer | null = null;
const ocr = createBrowserOcr({ base: appUrl('ocr/') });
/** The names of the images the pipeline reads with OCR (PNG, JPEG, WebP, TIFF). */
const SCAN_NAME = /\.(png|jpe?g|webp|tiff?)$/i;
/** The VM worker behind each API connect() made (a new one after the computer rested). */
const vmWorkers = new WeakMap<object, Worker>();

async function openStack(): Promise<StackApi> {
  // Memory first: it lays out the stack's folders (.os/, documents/, ...) on a new stack.
  const runtime = await loadSqlite({ wasmUrl });
  const memory = await openOpfsStackMemory({ runtime, stackId });
  const [storage, dir, device] = await Promise.all([openOpfsStorage(stackId), openStackDirectory(stackId), openDeviceStorage()]);
  return createStack({
    storage,
    files: createOpfsUserFiles(dir),
    memory,
    credentials: deviceCredentials(device),
    deviceLabel: deviceLabel(self.navigator.userAgent),
    // pdfjs (a fifth of the worker's code) is loaded by the first document read, not by the open.
    openPdf: async (bytes) => (await import('./documents/pdfjs-worker.ts')).openPdfInWorker(bytes),
    renderPdfPages: async (bytes, onPage) => (await import('./documents/pdfjs-worker.ts')).renderPdfPagesInWorker(bytes, onPage),
    ocr,
    defaults: { ...DEFAULT_CONNECTION, model: DEFAULT_MODEL, heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true },
    fetch: (input, init) => fetch(input, init),
    stackDir: () => openStackDirectory(stackId),
    copyDatabases: () => memory.copies(),
    snapshotDatabases: async () => {
      const system = await (await openStackDirectory(stackId)).getDirectoryHandle('.os');
      // VACUUM INTO writes only into a file that does not exist: an earlier export's copies go first.
      await system.removeEntry('snapshot', { recursive: true }).catch(() => {});
      await system.getDirectoryHandle('snapshot', { create: true });
      await memory.snapshot({ transcript: opfsSnapshotPath(stackId, 'transcript'), memory: opfsSnapshotPath(stackId, 'memory') });
    },
    createComputer: (emit, network) =>
      (computer = createComputer({
        connect: () => {
          const worker = new Worker(new URL('../vm/vm-worker.ts', import.meta.url), { type: 'module', name: `vm:${stackId}` });
          const vm = Comlink.wrap<VmApi>(worker) as unknown as VmApi;
          vmWorkers.set(vm, worker);
          return vm;
        },
        disconnect: (vm) => vmWorkers.get(vm)?.terminate(),
        imageBaseUrl: vmImageBase === null ? null : appUrl(vmImageBase),
        storedImage: async () => stackStoredImage(await openStackDirectory(stackId), await navigator.storage.getDirectory(), recipeOfImageBase(vmImageBase)),
        stackId,
        emit,
        network,
        proxy: Comlink.proxy,
      })),
    createStream: ({ provider, endpoint, apiKey, deviceToken }) =>
      provider === 'openai'
        ? createOpenAIStream({ baseURL: endpoint, apiKey })
        : streamOnFirstCall(async () =>
            (await import('./agent/anthropic.ts')).createAnthropicStream({ baseURL: endpoint, apiKey: provider === 'anthropic' ? apiKey : null, deviceToken: provider === 'proxy' ? deviceToken : null }),
          ),
  });
}

const stack = openStack();

// A stack whose computer was set up before starts it at once (a wake takes about a second); a
// new stack starts it on first use (the terminal, or the agent's bash), since the first start
// copies the system image into this browser.
void stack.then(async () => {
  if (computer && (await computerWasSetUp())) void computer.start();
});

async function computerWasSetUp(): Promise<boolean> {
  try {
    const dir = await openStackDirectory(stackId);
    const vm = await (await dir.getDirectoryHandle('.os')).getDirectoryHandle('vm');
    const meta = JSON.parse(await (await (await vm.getFileHandle('machine.json')).getFile()).text()) as { imageHash?: string | null };
    return typeof meta.imageHash === 'string';
  } catch {
    return false;
  }
}

// Calls wait for the stack to open; comlink forwards a rejected open as an error to the caller.
const api: StackApi = {
  request: async (request) => {
    // An image being attached will be read: the OCR engine starts now, beside the stack's opening
    // and the upload's checks, rather than after them.
    if (request.method === 'upload_file' && SCAN_NAME.test((request.params as { name?: string }).name ?? '')) ocr.prepare?.();
    const response = await (await stack).request(request);
    // A file's bytes move to the page rather than being copied there: a copy of a large PDF is
    // rebuilt on the page's thread, between the user's keystrokes.
    if (response.ok && request.method === 'read_file') {
      const { bytes } = response.result as { bytes: Uint8Array };
      if (bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return Comlink.transfer(response, [bytes.buffer]);
    }
    return response;
  },
  subscribe: async (afterSeq, listener) => (await stack).subscribe(afterSeq, listener),
  snapshot: async () => (await stack).snapshot(),
  subscribeTerminal: async (listener) => (await stack).subscribeTerminal(listener),
  terminalInput: async (bytes) => (await stack).terminalInput(bytes),
  terminalResize: async (cols, rows) => (await stack).terminalResize(cols, rows),
};

Comlink.expose(api);
