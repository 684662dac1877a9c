// What a saved state's guest holds of the /workspace server (its fids by path, its message size),
// kept beside the state as the journal, and why a journal from the stack's folder is not one.
import { checkName } from './workspace-fs.ts';

/** Largest message accepted (rc.sysinit mounts with msize=512000). */
export const MAX_MSIZE = 512 * 1024;
export const MIN_MSIZE = 4096;
/** More fids than a guest holds by far (a few hundred at most): a snapshot with more is not one of ours. */
const MAX_SNAPSHOT_FIDS = 65_536;

/** What a saved state's guest holds of the server: its fids (by path) and the message size. */
export interface Workspace9pSnapshot {
  generation: string | null;
  msize: number;
  fids: [number, string][];
}

/**
 * Why `value` cannot be a snapshot this server made, or null. It comes from the stack's folder,
 * which a stack file fills: every fid must name a path inside /workspace the guest could have
 * walked to (never the system space `.os/`, never `..`), and msize must be one this server
 * agrees to.
 */
export function snapshotProblem(value: unknown): string | null {
  const v = value as Partial<Workspace9pSnapshot> | null;
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'it is not an object';
  if (v.generation !== null && (typeof v.generation !== 'string' || v.generation.length > 200)) return 'its generation is not one';
  if (!Number.isInteger(v.msize) || v.msize! < MIN_MSIZE || v.msize! > MAX_MSIZE) return `its message size ${String(v.msize)} is not between ${MIN_MSIZE} and ${MAX_MSIZE}`;
  if (!Array.isArray(v.fids)) return 'it has no list of fids';
  if (v.fids.length > MAX_SNAPSHOT_FIDS) return `it holds ${v.fids.length} fids (at most ${MAX_SNAPSHOT_FIDS})`;
  const seen = new Set<number>();
  for (const entry of v.fids as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2) return 'a fid is not [number, path]';
    const [fid, path] = entry as [unknown, unknown];
    if (!Number.isInteger(fid) || (fid as number) < 0 || (fid as number) > 0xffffffff) return `fid ${String(fid)} is not a 32-bit number`;
    if (seen.has(fid as number)) return `fid ${String(fid)} is listed twice`;
    seen.add(fid as number);
    if (typeof path !== 'string') return `fid ${String(fid)} has no path`;
    if (path === '') continue;
    let dir = '';
    for (const name of path.split('/')) {
      try {
        dir = checkName(dir, name);
      } catch (error) {
        return `fid ${String(fid)} names "${path.slice(0, 100)}", outside what the guest may see of /workspace (${(error as Error).message})`;
      }
    }
  }
  return null;
}
