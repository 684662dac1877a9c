// Entry of a dedicated stack worker: opens one stack's storage and databases at once, while the
// stack's own code (open-stack.ts, most of the worker) is fetched and compiled beside them, and
// answers the page through comlink.
// First: the checkpoint code a restore cut short loads (stack-folders.ts) shares a chunk with the
// stack's own code, and that chunk's schemas are made before open-stack.ts's own first import.
import './zod-jitless.ts';
import * as Comlink from 'comlink';
import wasmUrl from '@journeyapps/wa-sqlite/dist/wa-sqlite.wasm?url';
import { loadSqlite, openOpfsStackMemory } from '../memory/index.ts';
import { requestTraits, type StackApi } from '../protocol/stack-api.ts';
import { openDeviceStorage, openOpfsStorage } from '../storage/json-files.ts';
import { openStackDirectory } from '../storage/opfs.ts';
import { readMeta } from './stack-meta.ts';

// What the worker's Content-Security-Policy refuses is said where the page's console shows it (the
// browser's own report stays in the worker's, which tests and bug reports do not see).
self.addEventListener('securitypolicyviolation', (event) => console.error(`Content Security Policy: the worker ${self.name || self.location.pathname} was refused ${event.effectiveDirective} ${event.blockedURI || '(inline)'}`));

// The app names the worker `stack:<id>`; one worker serves one stack.
const stackId = self.name.startsWith('stack:') ? self.name.slice('stack:'.length) : 'default';

/**
 * Finishes a checkpoint restore a killed tab left part-way, before anything opens the stack's
 * files (the page holds the stack's lock while this worker runs). The restore's code loads only
 * then: an ordinary open reads one small file more.
 */
async function finishPendingRestore(): Promise<void> {
  const dir = await openStackDirectory(stackId);
  if (!(await readMeta(dir))?.restoring) return;
  const { finishRestore } = await import('./stack-folders-restore.ts');
  const id = await finishRestore(dir);
  console.info(`checkpoint ${id}: a restore cut short was finished before the stack opened`);
}

const code = import('./open-stack.ts');
const stack = (async (): Promise<StackApi> => {
  // SQLite loads meanwhile.
  const runtime = loadSqlite({ wasmUrl });
  runtime.catch(() => {}); // a failure is reported by the open below
  await finishPendingRestore();
  const [memory, storage, dir, device] = await Promise.all([
    openOpfsStackMemory({ runtime, stackId }),
    openOpfsStorage(stackId),
    openStackDirectory(stackId),
    openDeviceStorage(),
  ]);
  return (await code).openStack({ stackId, memory, storage, dir, device });
})();

// Calls wait for the stack to open; comlink forwards a rejected open as an error to the caller.
const api: StackApi = {
  request: async (request) => {
    const traits = requestTraits(request.method);
    // An image being attached will be read: the OCR engine starts now, beside the stack's opening
    // and the upload's checks, rather than after them.
    if (traits.warmsOcr?.(request.params)) void code.then((loaded) => loaded.prepareOcr());
    const response = await (await stack).request(request);
    // A file's bytes move to the page rather than being copied there: a copy of a large PDF is
    // rebuilt on the page's thread, between the user's keystrokes.
    const moved = response.ok ? (traits.transfers?.(response.result) ?? []) : [];
    return moved.length ? Comlink.transfer(response, moved) : response;
  },
  subscribe: async (afterSeq, listener) => (await stack).subscribe(afterSeq, listener),
  snapshot: async () => (await stack).snapshot(),
  subscribeTerminal: async (listener) => (await stack).subscribeTerminal(listener),
  terminalInput: async (bytes) => (await stack).terminalInput(bytes),
  terminalResize: async (cols, rows) => (await stack).terminalResize(cols, rows),
};

Comlink.expose(api);
