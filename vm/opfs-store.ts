// The machine's files in OPFS (dedicated worker only): stacks/<stackId>/.os/vm/{overlay.data,
// overlay.map, state.bin, machine.json} -- in the system space, so user space (/workspace) never
// lists them. The overlay holds only the blocks this stack wrote (disk/overlay.ts); the rest of
// the disk is the image's, shared by every stack under OPFS base/ (disk/base-chunks.ts).
// machine.json is held open through a sync handle so a disk write can mark the saved state stale
// synchronously.
import { opfsSyncFile, type SyncAccessHandleLike, type SyncFile } from './disk.ts';
import type { MachineStore } from './machine-contract.ts';
import { sweepPartialWrites, writeWholeFile } from '../storage/atomic-write.ts';

export interface MachineMeta {
  /** The image recipe the overlay was made over; null while the first start is incomplete. */
  imageHash: string | null;
  /** The generation of state.bin, and the one the disk matches (null: moved on). */
  state: string | null;
  disk: string | null;
}

type SyncHandleFile = FileSystemFileHandle & { createSyncAccessHandle(): Promise<SyncAccessHandleLike> };

export interface OpfsMachineFiles {
  /** The two files of the disk's overlay (disk/overlay.ts). */
  overlay: { data: SyncFile; map: SyncFile };
  store: MachineStore;
  readMeta(): MachineMeta;
  writeMeta(meta: MachineMeta): void;
  /** The stack's folder (its user space is /workspace) and the machine's own folder. */
  stackDir: FileSystemDirectoryHandle;
  vmDir: FileSystemDirectoryHandle;
  /** Closes the sync handles (another worker may then open the files). */
  close(): void;
}

const EMPTY_META: MachineMeta = { imageHash: null, state: null, disk: null };
/** machine.json is three short strings; a larger one is not the machine's. */
const META_MAX_BYTES = 64 * 1024;
/** The warm set names chunks of the image (about 3,000): a longer list, or file, is not one. */
const WARM_SET_MAX = 100_000;
const WARM_SET_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The record as the machine may trust it: the folder may have come in a stack file, so each field
 * is taken only when it is a short string (a hash or a generation) or null; anything else is null,
 * which makes the machine trust no saved state and check its image afresh.
 */
export function machineMeta(value: unknown): MachineMeta {
  const v = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
  const field = (name: keyof MachineMeta) => {
    const x = v[name];
    return typeof x === 'string' && x.length > 0 && x.length <= 200 ? x : null;
  };
  return { imageHash: field('imageHash'), state: field('state'), disk: field('disk') };
}

/** The image's disk chunks, shared by every stack of this browser: OPFS `base/`. */
export async function openBaseDir(root: FileSystemDirectoryHandle): Promise<FileSystemDirectoryHandle> {
  return root.getDirectoryHandle('base', { create: true });
}

/** Runs `open` until no other worker holds the files (NoModificationAllowedError), for up to `waitMs`. */
async function whenReleased<T>(open: () => Promise<T>, waitMs: number): Promise<T> {
  const started = Date.now();
  for (let delay = 50; ; delay = Math.min(delay * 2, 1_000)) {
    try {
      return await open();
    } catch (error) {
      const held = error instanceof DOMException && error.name === 'NoModificationAllowedError';
      if (!held || Date.now() - started >= waitMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Opens (creating) a stack's machine files. Only one worker may hold them at a time: the worker
 * of a page just reloaded, or of a tab that just gave the stack up, releases its handles a moment
 * after it is terminated, so a file still held is waited for, with backoff, up to `waitMs`.
 */
export async function openOpfsMachine(root: FileSystemDirectoryHandle, stackId: string, waitMs = 10_000): Promise<OpfsMachineFiles> {
  const stacks = await root.getDirectoryHandle('stacks', { create: true });
  const stack = await stacks.getDirectoryHandle(stackId, { create: true });
  const system = await stack.getDirectoryHandle('.os', { create: true });
  const dir = await system.getDirectoryHandle('vm', { create: true });
  const open = async (name: string) => ((await dir.getFileHandle(name, { create: true })) as SyncHandleFile).createSyncAccessHandle();
  const handles = await whenReleased(async () => {
    const held: SyncAccessHandleLike[] = [];
    try {
      for (const name of ['overlay.data', 'overlay.map', 'machine.json']) held.push(await open(name));
      return held;
    } catch (error) {
      for (const handle of held) handle.close(); // nothing stays half-open for the next try
      throw error;
    }
  }, waitMs);
  const [dataHandle, mapHandle, metaHandle] = handles as [SyncAccessHandleLike, SyncAccessHandleLike, SyncAccessHandleLike];
  // A whole raw disk from before the disk had layers: its stack starts over on the shared image.
  await dir.removeEntry('disk.img').catch(() => {});
  // A saved state a killed tab was writing (as large as the guest's memory in use): room back.
  await sweepPartialWrites(dir).catch(() => 0);

  const readMeta = (): MachineMeta => {
    const size = metaHandle.getSize();
    if (size > META_MAX_BYTES) return { ...EMPTY_META };
    const bytes = new Uint8Array(size);
    metaHandle.read(bytes, { at: 0 });
    try {
      return machineMeta(JSON.parse(new TextDecoder().decode(bytes)));
    } catch {
      return { ...EMPTY_META }; // absent or torn: nothing is trusted
    }
  };
  const writeMeta = (meta: MachineMeta): void => {
    const bytes = new TextEncoder().encode(JSON.stringify(meta));
    metaHandle.truncate(0);
    metaHandle.write(bytes, { at: 0 });
    metaHandle.flush();
  };

  const store: MachineStore = {
    async readState() {
      try {
        const file = await (await dir.getFileHandle('state.bin')).getFile();
        return file.size > 0 ? await file.arrayBuffer() : null;
      } catch {
        return null;
      }
    },
    async writeState(state, generation, diskMovedOn) {
      // Whole or not at all (a crash leaves the old state), its room reserved before it is written.
      await writeWholeFile(dir, 'state.bin', new Uint8Array(state));
      // In the same task as the check: a disk write cannot fall between the two.
      writeMeta({ ...readMeta(), state: generation, disk: diskMovedOn?.() ? null : generation });
    },
    async readGeneration() {
      const { state, disk } = readMeta();
      return { state, disk };
    },
    markDiskDirty() {
      const meta = readMeta();
      if (meta.disk !== null) writeMeta({ ...meta, disk: null });
    },
    async clearState() {
      writeMeta({ ...readMeta(), state: null, disk: null });
      await dir.removeEntry('state.bin').catch(() => {});
    },
  };

  return {
    overlay: { data: opfsSyncFile(dataHandle), map: opfsSyncFile(mapHandle) },
    store,
    stackDir: stack,
    vmDir: dir,
    readMeta,
    writeMeta,
    close() {
      for (const handle of handles) handle.close();
    },
  };
}

/** The base chunks this stack's guest read last (disk/base-chunks.ts recentlyUsed), or none. */
export async function readWarmSet(vmDir: FileSystemDirectoryHandle): Promise<number[]> {
  try {
    const file = await (await vmDir.getFileHandle(WARM_SET)).getFile();
    if (file.size > WARM_SET_MAX_BYTES) return [];
    const value: unknown = JSON.parse(await file.text());
    return Array.isArray(value) ? value.filter((n): n is number => Number.isInteger(n) && n >= 0).slice(0, WARM_SET_MAX) : [];
  } catch {
    return []; // absent or torn: the next start loads nothing ahead
  }
}

export async function writeWarmSet(vmDir: FileSystemDirectoryHandle, indices: number[]): Promise<void> {
  await writeWholeFile(vmDir, WARM_SET, new TextEncoder().encode(JSON.stringify(indices)));
}

const WARM_SET = 'warm-set.json';
