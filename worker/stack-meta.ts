// A stack's own record, `.os/config/stack.json`: its name, when it was made, and the marks of work
// on its folder that a killed tab may leave unfinished. Small on purpose: the stack worker reads it
// before it opens anything of the stack.

/** The stack's own record; `copying` while a duplicate or an import is being made. */
export interface StackMeta {
  name: string;
  created_at: number;
  copying?: boolean;
  /**
   * The checkpoint the stack is being made (restore.ts): set before its files are removed and
   * cleared once the checkpoint's are all written, so a restore cut short is finished at the
   * next open instead of leaving half a stack.
   */
  restoring?: string;
}

export const META_DIR = ['.os', 'config'] as const;
export const META_FILE = 'stack.json';

/** The record; undefined when absent or unreadable (the stack keeps its id as its name). */
export async function readMeta(dir: FileSystemDirectoryHandle): Promise<StackMeta | undefined> {
  try {
    let at = dir;
    for (const part of META_DIR) at = await at.getDirectoryHandle(part);
    const meta = JSON.parse(await (await (await at.getFileHandle(META_FILE)).getFile()).text()) as Partial<StackMeta>;
    if (typeof meta?.name !== 'string' || !meta.name.trim()) return undefined;
    return {
      name: meta.name,
      created_at: typeof meta.created_at === 'number' ? meta.created_at : 0,
      ...(meta.copying ? { copying: true } : {}),
      ...(typeof meta.restoring === 'string' && meta.restoring ? { restoring: meta.restoring } : {}),
    };
  } catch {
    return undefined;
  }
}

export async function writeMeta(dir: FileSystemDirectoryHandle, meta: StackMeta): Promise<void> {
  await writeConfig(dir, META_FILE, meta);
}

/** Replaces one of the stack's `.os/config/` files whole. */
export async function writeConfig(dir: FileSystemDirectoryHandle, name: string, value: unknown): Promise<void> {
  let at = dir;
  for (const part of META_DIR) at = await at.getDirectoryHandle(part, { create: true });
  // createWritable swaps the whole file in on close: readers see the old record or the new.
  const writable = await (await at.getFileHandle(name, { create: true })).createWritable();
  try {
    await writable.write(JSON.stringify(value));
    await writable.close();
  } catch (error) {
    await writable.abort().catch(() => {});
    throw error;
  }
}
