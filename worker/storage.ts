// Where a stack keeps its small JSON state. OPFS in the browser; memory in unit tests.

export interface StackStorage {
  /**
   * Returns undefined when the file is absent. A file that does not parse is set aside
   * (renamed `<name>.corrupt-<time>`) rather than overwritten, and undefined is returned.
   */
  readJson<T>(name: string): Promise<T | undefined>;
  /** Replaces the file atomically: readers see the old or the new content, never a mix. */
  writeJson(name: string, value: unknown): Promise<void>;
}

export function createMemoryStorage(initial: Record<string, string> = {}): StackStorage & {
  files: Map<string, string>;
} {
  const files = new Map(Object.entries(initial));
  return {
    files,
    async readJson<T>(name: string) {
      const text = files.get(name);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as T;
      } catch {
        files.delete(name);
        files.set(`${name}.corrupt-${Date.now()}`, text);
        return undefined;
      }
    },
    async writeJson(name, value) {
      files.set(name, JSON.stringify(value));
    },
  };
}

/** The stack's folder in the Origin Private File System: `stacks/<stackId>/`. */
export async function openStackDirectory(stackId: string): Promise<FileSystemDirectoryHandle> {
  if (!/^[\w-]{1,64}$/.test(stackId)) throw new Error(`"${stackId}" is not a valid stack id.`);
  const root = await navigator.storage.getDirectory();
  const stacks = await root.getDirectoryHandle('stacks', { create: true });
  return stacks.getDirectoryHandle(stackId, { create: true });
}

/** JSON state in the stack's system space, `stacks/<stackId>/.os/config/`. */
export async function openOpfsStorage(stackId: string): Promise<StackStorage> {
  const system = await (await openStackDirectory(stackId)).getDirectoryHandle('.os', { create: true });
  return opfsJsonStorage(await system.getDirectoryHandle('config', { create: true }));
}

/** JSON state of this browser as a whole, shared by its stacks (the device's proxy credentials): `device/`. */
export async function openDeviceStorage(): Promise<StackStorage> {
  const root = await navigator.storage.getDirectory();
  return opfsJsonStorage(await root.getDirectoryHandle('device', { create: true }));
}

function opfsJsonStorage(dir: FileSystemDirectoryHandle): StackStorage {
  async function readText(name: string): Promise<string | undefined> {
    try {
      const handle = await dir.getFileHandle(name);
      return await (await handle.getFile()).text();
    } catch (error) {
      if (error instanceof DOMException && error.name === 'NotFoundError') return undefined;
      throw error;
    }
  }

  async function writeText(name: string, text: string): Promise<void> {
    const handle = await dir.getFileHandle(name, { create: true });
    // createWritable writes to a swap file that replaces the original only on close: atomic.
    const writable = await handle.createWritable();
    try {
      await writable.write(text);
      await writable.close();
    } catch (error) {
      await writable.abort().catch(() => {});
      throw error;
    }
  }

  return {
    async readJson<T>(name: string) {
      const text = await readText(name);
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text) as T;
      } catch {
        await writeText(`${name}.corrupt-${Date.now()}`, text);
        await dir.removeEntry(name);
        return undefined;
      }
    },
    async writeJson(name, value) {
      await writeText(name, JSON.stringify(value));
    },
  };
}
