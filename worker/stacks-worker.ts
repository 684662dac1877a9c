// Entry of the stacks worker: every stack of this browser (its OPFS folder), for the stack
// switcher and Settings → Storage. Sizes are summed and folders copied here, off the page.
import './zod-jitless.ts';
import * as Comlink from 'comlink';
import { toErrorShape } from './agent/errors.ts';
import { stackLockName, type StacksApi, type StacksResult } from '../protocol/stacks-api.ts';
import { createStackFolders, StackFolderError, webStackLocks } from './stack-folders.ts';
import { folderSize } from '../storage/walk.ts';
import { recipeOfImageBase } from './stack-file/format.ts';
import { noRoomMessage } from './storage-full.ts';
import { storageEstimate } from '../storage/quota.ts';
import { vmImageBase } from 'virtual:vm-image';
import { appUrl } from './app-root.ts';
import { version as appVersion } from '../package.json';

// What the worker's Content-Security-Policy refuses is said where the page's console shows it (the
// browser's own report stays in the worker's, which tests and bug reports do not see).
self.addEventListener('securitypolicyviolation', (event) => console.error(`Content Security Policy: the worker ${self.name || self.location.pathname} was refused ${event.effectiveDirective} ${event.blockedURI || '(inline)'}`));

const stacksDir = async () => (await navigator.storage.getDirectory()).getDirectoryHandle('stacks', { create: true });
const folders = createStackFolders({
  stacksDir,
  root: () => navigator.storage.getDirectory(),
  locks: webStackLocks(navigator.locks, stackLockName),
  estimate: storageEstimate,
  resetPointsDir: async () => (await navigator.storage.getDirectory()).getDirectoryHandle('kiosk', { create: true }),
});

/** Errors cross as data: `{code, message}`. */
async function result<T>(work: () => Promise<T>): Promise<StacksResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: error instanceof StackFolderError ? error.shape : toErrorShape(error) };
  }
}

/** Exports and imports under way, by the page's job name, for `cancel`. */
const jobs = new Map<string, AbortController>();
const EXPORTS_DIR = 'exports';

async function job<T>(name: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  jobs.set(name, controller);
  try {
    return await work(controller.signal);
  } finally {
    jobs.delete(name);
  }
}

/** The folder where an export without a picked file is made, for the page to download. */
async function exportsDir(): Promise<FileSystemDirectoryHandle> {
  return (await navigator.storage.getDirectory()).getDirectoryHandle(EXPORTS_DIR, { create: true });
}

async function forgetExport(): Promise<void> {
  await (await navigator.storage.getDirectory()).removeEntry(EXPORTS_DIR, { recursive: true }).catch(() => {});
}

/**
 * A downloaded export stays until the browser has copied it out; one older than that (ten
 * minutes) is removed when a page next starts this worker, so it does not take room for good.
 */
async function removeStaleExports(): Promise<void> {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(EXPORTS_DIR).catch(() => null);
  if (!dir) return;
  for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
    if (handle.kind !== 'file') continue;
    const file = await (handle as FileSystemFileHandle).getFile();
    if (Date.now() - file.lastModified > 10 * 60_000) await dir.removeEntry(name).catch(() => {});
  }
}
void removeStaleExports().catch(() => {});

const api: StacksApi = {
  list: (names) => result(() => folders.list(names)),
  create: (name) => result(() => folders.create(name)),
  rename: (stackId, name) => result(() => folders.rename(stackId, name)),
  checkDuplicate: (stackId, options) => result(async () => (await folders.checkDuplicate(stackId, options?.heldByCaller === true), null)),
  duplicate: (stackId, name, options) => result(() => folders.duplicate(stackId, name, options?.heldByCaller === true)),
  remove: (stackId, options) => result(() => folders.remove(stackId, options?.heldByCaller === true)),
  restoreCheckpoint: (stackId, checkpointId, options) =>
    result(() => folders.restoreCheckpoint(stackId, checkpointId, { heldByCaller: options?.heldByCaller === true, layout: typeof options?.layout === 'string' ? options.layout : null })),
  stackFromCheckpoint: (stackId, checkpointId, name) => result(() => folders.stackFromCheckpoint(stackId, checkpointId, name)),
  exportStack: (stackId, options, onProgress, whenStill) =>
    result(() =>
      job(options.job, async (signal) => {
        let file: FileSystemFileHandle | null = null;
        let out: WritableStream<Uint8Array>;
        if (options.target) {
          out = (await options.target.createWritable()) as unknown as WritableStream<Uint8Array>;
        } else {
          // Made in this origin's storage first: at most the stack's size again must fit.
          await forgetExport();
          const bytes = await folderSize(await (await stacksDir()).getDirectoryHandle(stackId));
          const refusal = noRoomMessage('The stack was not exported', bytes, await storageEstimate());
          if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
          file = await (await exportsDir()).getFileHandle(`${stackId}.stack`, { create: true });
          out = (await file.createWritable()) as unknown as WritableStream<Uint8Array>;
        }
        const done = await folders.exportStack(stackId, {
          layout: options.layout,
          out,
          appVersion,
          signal,
          ...(options.template ? { template: options.template } : {}),
          ...(Array.isArray(options.includeSecrets) ? { includeSecrets: options.includeSecrets.filter((id): id is string => typeof id === 'string') } : {}),
          ...(options.includeImage === true ? { includeImage: { appImageBase: vmImageBase === null ? null : appUrl(vmImageBase), appRecipe: recipeOfImageBase(vmImageBase), fetch: (url: string) => fetch(url) } } : {}),
          ...(onProgress ? { onProgress: throttle(onProgress) } : {}),
          ...(whenStill ? { whenStill: async () => void (await whenStill()) } : {}),
        });
        return { ...done, file: file ? await file.getFile() : null };
      }),
    ),
  exportContents: (stackId) => result(() => folders.exportContents(stackId)),
  importStack: (file, options, onProgress) =>
    result(() => job(options.job, (signal) => folders.importStack(file, { appImage: recipeOfImageBase(vmImageBase), signal, ...(options.name ? { name: options.name } : {}), ...(options.fileName ? { fileName: String(options.fileName) } : {}), ...(options.builtIn === true ? { builtIn: true } : {}), allowLarge: options.allowLarge === true, ...(onProgress ? { onProgress: throttle(onProgress) } : {}) }))),
  saveResetPoint: (stackId, options) => result(() => folders.saveResetPoint(stackId, options.heldByCaller === true)),
  resetToPoint: (stackId, options) => result(() => folders.resetToPoint(stackId, options.heldByCaller === true)),
  dropResetPoint: (stackId) => result(async () => (await folders.dropResetPoint(stackId), null)),
  cancel: async (name) => jobs.get(name)?.abort(),
  forgetExport,
};

/** Progress at most ten times a second (and the last), so the page is not flooded. */
function throttle(report: (done: number, total: number) => void): (done: number, total: number) => void {
  let last = 0;
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - last < 100) return;
    last = now;
    void Promise.resolve(report(done, total)).catch(() => {});
  };
}

Comlink.expose(api);
