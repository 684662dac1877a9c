// The app's handle on the stacks worker (worker/stacks-worker.ts): every stack of this browser,
// its name and size, and creating, renaming, duplicating and deleting stacks, off the page.
import * as Comlink from 'comlink';
import type { ExportContents, StackSummary, StacksApi, StacksReport, StacksResult } from '../../protocol/stacks-api.ts';
import { StackCallError } from '../connection/stack-client.ts';

/** The stacks worker's API with failures thrown as StackCallError (code and message from the worker). */
export interface StacksClient {
  list(names?: { id: string; name: string }[]): Promise<StacksReport>;
  create(name: string): Promise<StackSummary>;
  rename(stackId: string, name: string): Promise<StackSummary>;
  checkDuplicate(stackId: string, options: { heldByCaller: boolean }): Promise<null>;
  duplicate(stackId: string, name: string, options: { heldByCaller: boolean }): Promise<StackSummary>;
  remove(stackId: string, options: { heldByCaller: boolean }): Promise<{ freed: number }>;
  exportStack(
    stackId: string,
    options: { layout: string | null; target: FileSystemFileHandle | null; job: string; template?: { name: string; description: string }; includeImage?: boolean; includeSecrets?: string[] },
    onProgress?: (done: number, total: number) => void,
    whenStill?: () => Promise<void>,
  ): Promise<{ name: string; bytes: number; file: File | null }>;
  exportContents(stackId: string): Promise<ExportContents>;
  importStack(file: Blob, options: { job: string; name?: string; fileName?: string; builtIn?: boolean; allowLarge?: boolean }, onProgress?: (done: number, total: number) => void): Promise<{ stack: StackSummary; layout: string | null }>;
  saveResetPoint(stackId: string, options: { heldByCaller: boolean }): Promise<{ bytes: number }>;
  resetToPoint(stackId: string, options: { heldByCaller: boolean }): Promise<{ bytes: number }>;
  dropResetPoint(stackId: string): Promise<null>;
  restoreCheckpoint(stackId: string, checkpointId: string, options: { heldByCaller: boolean; layout: string | null }): Promise<{ layout: string | null }>;
  stackFromCheckpoint(stackId: string, checkpointId: string, name: string): Promise<{ stack: StackSummary; layout: string | null }>;
  cancel(job: string): Promise<void>;
  forgetExport(): Promise<void>;
}

let shared: StacksClient | null = null;

/** One stacks worker per page, started on first use. */
export function stacksClient(): StacksClient {
  shared ??= wrapStacks(
    Comlink.wrap<StacksApi>(new Worker(new URL('../../worker/stacks-worker.ts', import.meta.url), { type: 'module', name: 'stacks' })) as unknown as StacksApi,
  );
  return shared;
}

export function wrapStacks(api: StacksApi): StacksClient {
  const unwrap = async <T>(answer: Promise<StacksResult<T>>): Promise<T> => {
    const result = await answer;
    if (!result.ok) throw new StackCallError(result.error);
    return result.value;
  };
  return {
    list: (names) => unwrap(api.list(names)),
    create: (name) => unwrap(api.create(name)),
    rename: (stackId, name) => unwrap(api.rename(stackId, name)),
    checkDuplicate: (stackId, options) => unwrap(api.checkDuplicate(stackId, options)),
    duplicate: (stackId, name, options) => unwrap(api.duplicate(stackId, name, options)),
    remove: (stackId, options) => unwrap(api.remove(stackId, options)),
    // Progress comes back through a proxied callback; the worker calls it, never the reverse.
    exportStack: (stackId, options, onProgress, whenStill) => unwrap(api.exportStack(stackId, options, onProgress && Comlink.proxy(onProgress), whenStill && Comlink.proxy(whenStill))),
    exportContents: (stackId) => unwrap(api.exportContents(stackId)),
    importStack: (file, options, onProgress) => unwrap(api.importStack(file, options, onProgress && Comlink.proxy(onProgress))),
    saveResetPoint: (stackId, options) => unwrap(api.saveResetPoint(stackId, options)),
    resetToPoint: (stackId, options) => unwrap(api.resetToPoint(stackId, options)),
    dropResetPoint: (stackId) => unwrap(api.dropResetPoint(stackId)),
    restoreCheckpoint: (stackId, checkpointId, options) => unwrap(api.restoreCheckpoint(stackId, checkpointId, options)),
    stackFromCheckpoint: (stackId, checkpointId, name) => unwrap(api.stackFromCheckpoint(stackId, checkpointId, name)),
    cancel: (job) => api.cancel(job),
    forgetExport: () => api.forgetExport(),
  };
}
