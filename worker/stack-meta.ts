// A stack's own record, `.os/config/stack.json`: its name, when it was made, and the marks of work
// on its folder that a killed tab may leave unfinished. Small on purpose: the stack worker reads it
// before it opens anything of the stack.
import { readJsonAt, writeJsonAt } from '../storage/json-files.ts';
import { STACK_PATHS } from '../storage/layout.ts';

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

/** The record's path in the stack's folder. */
export const META_PATH = `${STACK_PATHS.config}/stack.json`;

/** The record; undefined when absent or unreadable (the stack keeps its id as its name). */
export async function readMeta(dir: FileSystemDirectoryHandle): Promise<StackMeta | undefined> {
  const meta = (await readJsonAt(dir, META_PATH)) as Partial<StackMeta> | null;
  if (typeof meta?.name !== 'string' || !meta.name.trim()) return undefined;
  return {
    name: meta.name,
    created_at: typeof meta.created_at === 'number' ? meta.created_at : 0,
    ...(meta.copying ? { copying: true } : {}),
    ...(typeof meta.restoring === 'string' && meta.restoring ? { restoring: meta.restoring } : {}),
  };
}

export async function writeMeta(dir: FileSystemDirectoryHandle, meta: StackMeta): Promise<void> {
  await writeJsonAt(dir, META_PATH, meta);
}

/** Replaces one of the stack's `.os/config/` files whole: readers see the old record or the new. */
export async function writeConfig(dir: FileSystemDirectoryHandle, name: string, value: unknown): Promise<void> {
  await writeJsonAt(dir, `${STACK_PATHS.config}/${name}`, value);
}
