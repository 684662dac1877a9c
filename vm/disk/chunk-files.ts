// Where the image's chunks are kept (`ChunkFiles`): OPFS `base/`, one file per chunk by its
// sha256, shared by every stack of this browser. A stored image's own chunks are read from its
// packed file instead (stored-image.ts).
import { writeBytes } from '../../storage/atomic-write.ts';

/** Where the chunks are kept: OPFS `base/` in the browser, a folder or a Map in tests. */
export interface ChunkFiles {
  /** The stored gzip bytes, or null when absent. */
  read(sha256: string): Promise<Uint8Array | null>;
  /** Stores a chunk whole or not at all. */
  write(sha256: string, gzip: Uint8Array): Promise<void>;
  remove(sha256: string): Promise<void>;
  list(): Promise<Set<string>>;
}

/** OPFS `base/`: one file per chunk, written through a swap file so a cut write leaves nothing. */
export function opfsChunkFiles(dir: FileSystemDirectoryHandle): ChunkFiles {
  // A handle per chunk, kept: in the VM worker each step of a read waits for the emulator's next
  // yield, so a read that skips a lookup answers the guest sooner.
  const handles = new Map<string, FileSystemFileHandle>();
  return {
    async read(sha256) {
      try {
        let handle = handles.get(sha256);
        if (!handle) handles.set(sha256, (handle = await dir.getFileHandle(sha256)));
        return new Uint8Array(await (await handle.getFile()).arrayBuffer());
      } catch {
        handles.delete(sha256);
        return null;
      }
    },
    async write(sha256, gzip) {
      try {
        await writeBytes(await dir.getFileHandle(sha256, { create: true }), gzip);
      } catch (error) {
        await dir.removeEntry(sha256).catch(() => {});
        throw error;
      }
    },
    async remove(sha256) {
      handles.delete(sha256);
      await dir.removeEntry(sha256).catch(() => {});
    },
    async list() {
      const names = new Set<string>();
      for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.add(name);
      return names;
    },
  };
}
