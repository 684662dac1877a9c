// Test support for the stack-file browser tests: the stack folders over an OPFS area of a test's
// own, their Web Locks named within it, so tests running side by side never share a lock.
import { stackLockName } from '../../protocol/stacks-api.ts';
import { createStackFolders, type StackFolders, type StackFoldersDeps } from '../stack-folders.ts';

/** `area`: the folder `stacksDir` opens; new stacks are named `<idPrefix>1`, `<idPrefix>2`, … */
export function foldersIn(area: string, stacksDir: () => Promise<FileSystemDirectoryHandle>, options: { idPrefix: string } & Pick<StackFoldersDeps, 'estimate'> & Partial<Pick<StackFoldersDeps, 'releaseWaitMs'>>): StackFolders {
  let n = 0;
  const { idPrefix, ...rest } = options;
  return createStackFolders({
    stacksDir,
    locks: {
      async withLock<T>(stackId: string, work: (signal: AbortSignal) => Promise<T>) {
        return navigator.locks.request(`${area}:${stackLockName(stackId)}`, { ifAvailable: true }, async (lock) =>
          lock ? { held: true as const, value: await work(new AbortController().signal) } : { held: false as const },
        );
      },
    },
    newId: () => `${idPrefix}${++n}`,
    ...rest,
  });
}
