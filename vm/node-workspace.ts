// A WorkspaceStore over a directory on disk, the Node stand-in for the stack's OPFS folder (tests
// and benchmarks only, like node-file.ts).
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isWorkspacePath, type WorkspaceEntry, type WorkspaceStore } from './workspace.ts';

export function nodeWorkspaceStore(root: string): WorkspaceStore {
  const full = (path: string) => {
    if (!isWorkspacePath(path)) throw new Error(`"${path}" is not a workspace path`);
    return join(root, path);
  };
  const entry = async (path: string): Promise<WorkspaceEntry | null> => {
    try {
      const s = await stat(full(path));
      return { path, kind: s.isDirectory() ? 'dir' : 'file', lastModified: s.isDirectory() ? 0 : s.mtimeMs, size: s.isDirectory() ? 0 : s.size };
    } catch {
      return null;
    }
  };
  return {
    async list() {
      const out: WorkspaceEntry[] = [];
      const walk = async (prefix: string) => {
        for (const name of (await readdir(prefix ? full(prefix) : root)).sort()) {
          const path = prefix ? `${prefix}/${name}` : name;
          if (!isWorkspacePath(path)) continue;
          const found = await entry(path);
          if (!found) continue;
          out.push(found);
          if (found.kind === 'dir') await walk(path);
        }
      };
      await mkdir(root, { recursive: true });
      await walk('');
      return out;
    },
    async read(path) {
      try {
        return new Uint8Array(await readFile(full(path)));
      } catch {
        return null;
      }
    },
    async write(path, bytes) {
      await mkdir(dirname(full(path)), { recursive: true });
      await writeFile(full(path), bytes);
      return (await stat(full(path))).mtimeMs;
    },
    async mkdir(path) {
      await mkdir(full(path), { recursive: true });
    },
    async remove(path) {
      await rm(full(path), { recursive: true, force: true });
    },
    stat: entry,
  };
}
