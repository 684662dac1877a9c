// The WorkspaceStore over the stack's OPFS folder (stacks/<stackId>/, the system space .os/ left
// out) and the journal beside the machine's state (.os/vm/workspace.json).
import { isPartialWrite, sweepPartialWrites, writeWholeFile } from './opfs-write.ts';
import { isWorkspacePath, type WorkspaceEntry, type WorkspaceJournal, type WorkspaceStore } from './workspace.ts';

type DirEntries = FileSystemDirectoryHandle & { entries(): AsyncIterable<[string, FileSystemHandle]> };

const isMissing = (error: unknown) => error instanceof DOMException && (error.name === 'NotFoundError' || error.name === 'TypeMismatchError');

export function opfsWorkspaceStore(stackDir: FileSystemDirectoryHandle): WorkspaceStore {
  async function parentOf(path: string, create: boolean): Promise<[FileSystemDirectoryHandle, string] | null> {
    if (!isWorkspacePath(path)) throw new Error(`"${path}" is not a workspace path`);
    const parts = path.split('/');
    let dir = stackDir;
    try {
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create });
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    return [dir, parts.at(-1)!];
  }

  async function fileOf(path: string): Promise<File | null> {
    const found = await parentOf(path, false);
    if (!found) return null;
    try {
      return await (await found[0].getFileHandle(found[1])).getFile();
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  return {
    async list() {
      const out: WorkspaceEntry[] = [];
      const walk = async (dir: FileSystemDirectoryHandle, prefix: string) => {
        for await (const [name, handle] of (dir as DirEntries).entries()) {
          const path = prefix ? `${prefix}/${name}` : name;
          if (!isWorkspacePath(path)) continue; // .os and anything odd
          if (isPartialWrite(name)) continue; // a write in progress, or one a killed tab left
          if (handle.kind === 'directory') {
            out.push({ path, kind: 'dir', lastModified: 0, size: 0 });
            await walk(handle as FileSystemDirectoryHandle, path);
            await sweepPartialWrites(handle as FileSystemDirectoryHandle);
          } else {
            const file = await (handle as FileSystemFileHandle).getFile();
            out.push({ path, kind: 'file', lastModified: file.lastModified, size: file.size });
          }
        }
      };
      await walk(stackDir, '');
      await sweepPartialWrites(stackDir);
      return out;
    },
    async read(path) {
      const file = await fileOf(path);
      return file ? new Uint8Array(await file.arrayBuffer()) : null;
    },
    async write(path, bytes) {
      const [dir, name] = (await parentOf(path, true))!;
      // A folder of that name (the guest replaced a folder by a file): the file wins.
      const folder = await dir.getDirectoryHandle(name).then(
        () => true,
        () => false,
      );
      if (folder) await dir.removeEntry(name, { recursive: true });
      const handle = await writeWholeFile(dir, name, bytes);
      return (await handle.getFile()).lastModified;
    },
    async mkdir(path) {
      const [dir, name] = (await parentOf(path, true))!;
      try {
        await dir.getDirectoryHandle(name, { create: true });
      } catch (error) {
        if (!(error instanceof DOMException && error.name === 'TypeMismatchError')) throw error;
        await dir.removeEntry(name);
        await dir.getDirectoryHandle(name, { create: true });
      }
    },
    async remove(path) {
      const found = await parentOf(path, false);
      if (!found) return;
      try {
        await found[0].removeEntry(found[1], { recursive: true });
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    },
    async stat(path) {
      const found = await parentOf(path, false);
      if (!found) return null;
      try {
        const file = await (await found[0].getFileHandle(found[1])).getFile();
        return { path, kind: 'file', lastModified: file.lastModified, size: file.size };
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
      try {
        await found[0].getDirectoryHandle(found[1]);
        return { path, kind: 'dir', lastModified: 0, size: 0 };
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
    },
  };
}

/** In the machine's folder: which /workspace files the guest had at the last save (a checkpoint keeps it too). */
export const JOURNAL = 'workspace.json';

export async function readJournal(vmDir: FileSystemDirectoryHandle): Promise<WorkspaceJournal | null> {
  try {
    const text = await (await (await vmDir.getFileHandle(JOURNAL)).getFile()).text();
    const value = JSON.parse(text) as WorkspaceJournal;
    return value && typeof value === 'object' && value.files && typeof value.files === 'object' ? value : null;
  } catch {
    return null; // absent or torn: reconcile reloads everything
  }
}

export async function writeJournal(vmDir: FileSystemDirectoryHandle, journal: WorkspaceJournal): Promise<void> {
  const writable = await (await vmDir.getFileHandle(JOURNAL, { create: true })).createWritable();
  await writable.write(JSON.stringify(journal));
  await writable.close();
}
