// Entry of the stacks worker: every stack of this browser (its OPFS folder), for the stack
// switcher and Settings → Storage. Sizes are summed and folders copied here, off the page.
import * as Comlink from 'comlink';
import { toErrorShape } from './agent/errors.ts';
import { stackLockName, type StacksApi, type StacksResult } from './protocol.ts';
import { createStackFolders, StackFolderError, webStackLocks } from './stack-folders.ts';
import { storageEstimate } from './storage-full.ts';

const folders = createStackFolders({
  stacksDir: async () => (await navigator.storage.getDirectory()).getDirectoryHandle('stacks', { create: true }),
  locks: webStackLocks(navigator.locks, stackLockName),
  estimate: storageEstimate,
});

/** Errors cross as data: `{code, message}`. */
async function result<T>(work: () => Promise<T>): Promise<StacksResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: error instanceof StackFolderError ? error.shape : toErrorShape(error) };
  }
}

const api: StacksApi = {
  list: (names) => result(() => folders.list(names)),
  create: (name) => result(() => folders.create(name)),
  rename: (stackId, name) => result(() => folders.rename(stackId, name)),
  checkDuplicate: (stackId, options) => result(async () => (await folders.checkDuplicate(stackId, options?.heldByCaller === true), null)),
  duplicate: (stackId, name, options) => result(() => folders.duplicate(stackId, name, options?.heldByCaller === true)),
  remove: (stackId, options) => result(() => folders.remove(stackId, options?.heldByCaller === true)),
};

Comlink.expose(api);
