// Beside the machine's saved state (.os/vm/workspace.json): the /workspace share's snapshot (the
// guest's fids) taken with it. A checkpoint and a stack file carry it with the state.
import { snapshotProblem, type Workspace9pSnapshot } from './workspace-9p-snapshot.ts';

/** In the machine's folder: what the guest held of /workspace at the last save. */
export const JOURNAL = 'workspace.json';

/** A journal larger than this is not one a guest's fids make. */
export const JOURNAL_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The journal, or null when it is absent, torn, or not one the share could have written: the
 * folder may have come in a stack file, so it is checked whole (snapshotProblem), and the guest
 * then sees /workspace afresh rather than fids someone else chose.
 */
export async function readJournal(vmDir: FileSystemDirectoryHandle): Promise<Workspace9pSnapshot | null> {
  let value: unknown;
  try {
    const file = await (await vmDir.getFileHandle(JOURNAL)).getFile();
    if (file.size > JOURNAL_MAX_BYTES) throw new Error(`${file.size} bytes`);
    value = JSON.parse(await file.text());
  } catch {
    return null; // absent or torn: the guest sees /workspace afresh
  }
  const problem = snapshotProblem(value);
  if (problem === null) return value as Workspace9pSnapshot;
  console.warn(`/workspace: the share's journal is not taken (${problem}); the guest sees /workspace afresh`);
  return null;
}

export async function writeJournal(vmDir: FileSystemDirectoryHandle, journal: Workspace9pSnapshot): Promise<void> {
  const writable = await (await vmDir.getFileHandle(JOURNAL, { create: true })).createWritable();
  await writable.write(JSON.stringify(journal));
  await writable.close();
}
