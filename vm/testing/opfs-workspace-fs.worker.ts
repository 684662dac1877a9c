// A dedicated worker (sync access handles exist only there) holding opfsWorkspaceFs over an OPFS
// folder, for browser tests: `open(folder)` then the fs's own methods over Comlink.
import * as Comlink from 'comlink';
import { opfsWorkspaceFs } from '../opfs-workspace-fs.ts';
import { FsError, type WorkspaceFs } from '../workspace-fs.ts';

let fs: WorkspaceFs | null = null;

/** Each call answers { value } or { errno } (an FsError does not cross Comlink as itself). */
const api = {
  async open(folder: string) {
    fs = opfsWorkspaceFs(await (await navigator.storage.getDirectory()).getDirectoryHandle(folder, { create: true }));
  },
  async call(method: keyof WorkspaceFs, ...args: unknown[]): Promise<{ value?: unknown; errno?: number; message?: string }> {
    try {
      const value = await (fs![method] as (...a: unknown[]) => Promise<unknown>)(...args);
      return { value };
    } catch (error) {
      if (error instanceof FsError) return { errno: error.errno, message: error.message };
      throw error;
    }
  },
};
export type OpfsWorkspaceFsWorker = typeof api;
Comlink.expose(api);
