// The stack's own code, loaded by the worker's entry (stack-worker.ts) while the stack's storage
// and databases open: settings, canvas, agent, computer and documents, wired to the browser.
import './zod-jitless.ts';
import * as Comlink from 'comlink';
import { opfsSnapshotPath, type StackMemory } from '../memory/index.ts';
import { createOpenAIStream } from './agent/openai.ts';
import { streamOnFirstCall } from './agent/stream-on-first-call.ts';
import type { StackApi } from '../protocol/stack-api.ts';
import { DEFAULT_ENDPOINTS, DEFAULT_MODEL } from './settings.ts';
import { vmImageBase } from 'virtual:vm-image';
import { appUrl } from './app-root.ts';
import type { VmApi } from '../vm/protocol.ts';
import { stackStoredImage } from '../vm/stored-image.ts';
import { recipeOfImageBase } from './stack-file/format.ts';
import { createComputer, type Computer } from './computer.ts';
import { createStack } from './stack.ts';
import type { StackStorage } from '../storage/json-files.ts';
import { openStackDirectory } from '../storage/opfs.ts';
import { deviceCredentials, deviceLabel } from './device.ts';
import { createOpfsUserFiles } from './user-files.ts';
import { createBrowserOcr } from './documents/ocr.ts';

// The proxy the build was made for; else the local one, but only for a page served from this
// machine. Elsewhere (a static host with no proxy) the default is the user's own key, which works
// with no server at all once they enter it.
const ON_THIS_MACHINE = /^(localhost|127\.0\.0\.1|\[::1\])$/.test(self.location.hostname);
const PROXY_URL = import.meta.env.VITE_PROXY_URL || (ON_THIS_MACHINE ? 'http://127.0.0.1:8787' : '');
const DEFAULT_CONNECTION = PROXY_URL ? { provider: 'proxy' as const, endpoint: PROXY_URL } : { provider: 'anthropic' as const, endpoint: DEFAULT_ENDPOINTS.anthropic };

let computer: Computer | null = null;
const ocr = createBrowserOcr({ base: appUrl('ocr/') });
/** The VM worker behind each API connect() made (a new one after the computer rested). */
const vmWorkers = new WeakMap<object, Worker>();

/** What the worker's entry opened while this module loaded. */
export interface Opened {
  stackId: string;
  memory: StackMemory;
  storage: StackStorage;
  dir: FileSystemDirectoryHandle;
  device: StackStorage;
}

/** Starts the OCR engine now: an image being attached will be read. */
export function prepareOcr(): void {
  ocr.prepare?.();
}

export async function openStack({ stackId, memory, storage, dir, device }: Opened): Promise<StackApi> {
  // An export cut short (the tab killed while it wrote the file) leaves its copies of the
  // databases behind: stale once the stack is open again, and as large as the databases.
  await dir
    .getDirectoryHandle('.os')
    .then((system) => system.removeEntry('snapshot', { recursive: true }))
    .catch(() => {});
  const stack = await createStack({
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
  // A stack whose computer was set up before starts it at once (a wake takes about a second); a
  // new stack starts it on first use (the terminal, or the agent's bash), since the first start
  // copies the system image into this browser.
  void computerWasSetUp(dir).then((setUp) => {
    if (computer && setUp) void computer.start();
  });
  return stack;
}

async function computerWasSetUp(dir: FileSystemDirectoryHandle): Promise<boolean> {
  try {
    const vm = await (await dir.getDirectoryHandle('.os')).getDirectoryHandle('vm');
    const meta = JSON.parse(await (await (await vm.getFileHandle('machine.json')).getFile()).text()) as { imageHash?: string | null };
    return typeof meta.imageHash === 'string';
  } catch {
    return false;
  }
}

