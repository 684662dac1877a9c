// Beside the machine's saved state (.os/vm/workspace.json): the /workspace share's snapshot (the
// guest's fids) taken with it. A checkpoint and a stack file carry it with the state.
import type { Workspace9pSnapshot } from './workspace-9p.ts';

/** In the machine's folder: what the guest held of /workspace at the last save. */
export const JOURNAL = 'workspace.json';

export async function readJournal(vmDir: FileSystemDirectoryHandle): Promise<Workspace9pSnapshot | null> {
  try {
    const text = await (await (await vmDir.getFileHandle(JOURNAL)).getFile()).text();
    const value = JSON.parse(text) as Workspace9pSnapshot;
    return isSnapshot(value) ? value : null;
  } catch {
    return null; // absent or torn: the guest sees /workspace afresh
  }
}

export function isSnapshot(value: unknown): value is Workspace9pSnapshot {
  const v = value as Workspace9pSnapshot | null;
  return (
    !!v &&
    typeof v === 'object' &&
    (typeof v.generation === 'string' || v.generation === null) &&
    Number.isInteger(v.msize) &&
    Array.isArray(v.fids) &&
    v.fids.every((f) => Array.isArray(f) && Number.isInteger(f[0]) && typeof f[1] === 'string')
  );
}

export async function writeJournal(vmDir: FileSystemDirectoryHandle, journal: Workspace9pSnapshot): Promise<void> {
  const writable = await (await vmDir.getFileHandle(JOURNAL, { create: true })).createWritable();
  await writable.write(JSON.stringify(journal));
  await writable.close();
}
