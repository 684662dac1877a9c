// Every stack of this browser as a folder under OPFS `stacks/<id>/`: their names and sizes, and
// creating, renaming, duplicating and deleting them. Runs in the stacks worker, never on the page.
// A stack open in a tab is guarded by that tab's Web Lock: one is copied or deleted only while it
// is still (nobody holds its lock and this takes it, or the caller holds it and closed its worker).
import type { ErrorShape } from '../protocol/errors.ts';
import type { ExportContents, StackSummary, StacksReport } from '../protocol/stacks-api.ts';
import { SNAPSHOT_DIR, StackFileError, totalSize } from './stack-file/format.ts';
import { checkpointKinds, openCheckpointStore } from './checkpoints/checkpoints.ts';
import type { FetchLike } from '../vm/image.ts';
import { checkpointSources, keptThroughRestore } from './checkpoints/sources.ts';
import { CheckpointError } from './checkpoints/store.ts';
import { newTrustRecord, TRUST_FILE } from './trust-record.ts';
import { isStorageFull, noRoomMessage, storageFullMessage, type StorageEstimateLike } from './storage-full.ts';
import { META_DIR, META_FILE, readMeta, writeConfig, writeMeta, type StackMeta } from './stack-meta.ts';
import type { CheckpointStore } from './checkpoints/store.ts';

/** A stack's checkpoints: never copied with it (a duplicate or a kiosk starts its own). */
const CHECKPOINTS_PATH = '.os/checkpoints';
const DEFAULT_NAME = 'My stack';
/** A stack id is a folder name: a safe alphabet (app/stacks/stacks.ts and storage.ts agree). */
const STACK_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export class StackFolderError extends Error {
  constructor(readonly shape: ErrorShape) {
    super(shape.message);
    this.name = 'StackFolderError';
  }
}

export interface StackLocks {
  /**
   * Runs `work` holding the stack's lock and returns what it returns; returns `{held: false}`
   * without running it when another tab holds the lock. `signal` aborts when another tab takes
   * the lock over meanwhile ("Use it here"): the work must stop and undo what it started.
   */
  withLock<T>(stackId: string, work: (signal: AbortSignal) => Promise<T>): Promise<{ held: true; value: T } | { held: false }>;
}

export interface StackFoldersDeps {
  /** The OPFS folder that holds one folder per stack (`stacks/`). */
  stacksDir(): Promise<FileSystemDirectoryHandle>;
  locks: StackLocks;
  /** The origin's use and quota; undefined when the browser does not say. */
  estimate(): Promise<StorageEstimateLike | undefined>;
  newId?: () => string;
  now?: () => number;
  /** How long a file still held by a just-stopped worker is waited for before deleting fails. */
  releaseWaitMs?: number;
  /** Where kiosk reset points are kept (`kiosk/`, beside `stacks/`: never listed as stacks). */
  resetPointsDir?(): Promise<FileSystemDirectoryHandle>;
  /** The OPFS root: system images a stack file brought are kept in its `images/`. */
  root?(): Promise<FileSystemDirectoryHandle>;
}

export interface StackFolders {
  list(names?: { id: string; name: string }[]): Promise<StacksReport>;
  create(name: string): Promise<StackSummary>;
  rename(stackId: string, name: string): Promise<StackSummary>;
  checkDuplicate(stackId: string, heldByCaller: boolean): Promise<void>;
  duplicate(stackId: string, name: string, heldByCaller: boolean): Promise<StackSummary>;
  remove(stackId: string, heldByCaller: boolean): Promise<{ freed: number }>;
  /** Writes a still stack (closed for export by the caller, who holds its lock) as a `.stack` file to `out`. */
  exportStack(stackId: string, options: StackExportOptions): Promise<{ name: string; bytes: number }>;
  /** What an export of the stack (open or not) would hold, for the export dialog. */
  exportContents(stackId: string): Promise<ExportContents>;
  /** Makes a new stack from a `.stack` file, checked whole before it is listed; returns it and its canvas layout. */
  importStack(file: Blob, options: StackImportOptions): Promise<{ stack: StackSummary; layout: string | null }>;
  /** Copies a still stack whole as its kiosk reset point, replacing an earlier one. */
  saveResetPoint(stackId: string, heldByCaller: boolean): Promise<{ bytes: number }>;
  /** Makes a still stack exactly its reset point again: everything else in its folder goes. */
  resetToPoint(stackId: string, heldByCaller: boolean): Promise<{ bytes: number }>;
  /** Forgets a stack's reset point (kiosk mode ended). */
  dropResetPoint(stackId: string): Promise<void>;
  /**
   * Makes a still stack what it was at one of its checkpoints. The stack as it is now is kept
   * first as a checkpoint of its own (`layout`: its window places), so a restore can be undone.
   * Returns the checkpoint's layout.
   */
  restoreCheckpoint(stackId: string, checkpointId: string, options: { heldByCaller: boolean; layout: string | null }): Promise<{ layout: string | null }>;
  /** Makes a new stack, named `name`, of a stack's checkpoint; the stack itself is not touched (it may be open). */
  stackFromCheckpoint(stackId: string, checkpointId: string, name: string): Promise<{ stack: StackSummary; layout: string | null }>;
}

export interface StackExportOptions {
  layout: string | null;
  /** Carries the system image the stack's computer runs on (image-entries.ts). */
  includeImage?: { appImageBase: string | null; appRecipe: string | null; fetch: FetchLike };
  /** Resolves once the caller closed the stack for the export: what the closing leaves alone is packed meanwhile. */
  whenStill?: () => Promise<void>;
  /** A template of the stack (stack-file/template.ts), named and described so; the stack may be open. */
  template?: { name: string; description: string };
  /** MCP header and env values to carry (ids from `exportContents`); the others are left out. */
  includeSecrets?: readonly string[];
  out: WritableStream<Uint8Array>;
  appVersion: string;
  signal: AbortSignal;
  onProgress?(done: number, total: number): void;
}

export interface StackImportOptions {
  appImage: string | null;
  /** The new stack's name; the file's own when absent. */
  name?: string;
  /** The file's name, shown in the stack's review. */
  fileName?: string;
  /** A template the app itself ships: the new stack is its owner's, not restricted. */
  builtIn?: boolean;
  /** The user said yes to a stack over the import ceiling; without it such a file is refused (`too_large`). */
  allowLarge?: boolean;
  signal: AbortSignal;
  onProgress?(done: number, total: number): void;
}

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };
const entriesOf = (dir: FileSystemDirectoryHandle) => (dir as unknown as Entries).entries();

export function createStackFolders(deps: StackFoldersDeps): StackFolders {
  const newId = deps.newId ?? (() => `s-${crypto.randomUUID().slice(0, 8)}`);
  const now = deps.now ?? Date.now;
  const releaseWaitMs = deps.releaseWaitMs ?? 10_000;

  async function folder(stackId: string): Promise<FileSystemDirectoryHandle> {
    if (!STACK_ID.test(stackId)) throw new StackFolderError({ code: 'bad_request', message: `"${stackId}" is not a stack id.` });
    try {
      return await (await deps.stacksDir()).getDirectoryHandle(stackId);
    } catch (error) {
      if (isNotFound(error)) throw new StackFolderError({ code: 'not_found', message: 'That stack is not in this browser any more.' });
      throw error;
    }
  }

  async function summary(stackId: string, dir: FileSystemDirectoryHandle): Promise<StackSummary> {
    const meta = await readMeta(dir);
    return { id: stackId, name: meta?.name ?? fallbackName(stackId), bytes: await folderSize(dir) };
  }

  /** Runs `work` on a still stack: under its lock, or as the caller who holds it. */
  async function whileStill<T>(stackId: string, name: string, heldByCaller: boolean, doing: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (heldByCaller) return work(new AbortController().signal);
    const outcome = await deps.locks.withLock(stackId, work);
    if (!outcome.held) throw new StackFolderError({ code: 'busy', message: `"${name}" is open in another tab. Close it there (or open it here) first, then ${doing} it.` });
    return outcome.value;
  }

  async function resetPoints(): Promise<FileSystemDirectoryHandle> {
    if (!deps.resetPointsDir) throw new StackFolderError({ code: 'internal', message: 'Kiosk reset points are not available here.' });
    return deps.resetPointsDir();
  }

  async function stackIds(): Promise<{ id: string; dir: FileSystemDirectoryHandle; meta: StackMeta | undefined }[]> {
    const found: { id: string; dir: FileSystemDirectoryHandle; meta: StackMeta | undefined }[] = [];
    for await (const [id, handle] of entriesOf(await deps.stacksDir())) {
      if (handle.kind !== 'directory' || !STACK_ID.test(id)) continue;
      const dir = handle as FileSystemDirectoryHandle;
      found.push({ id, dir, meta: await readMeta(dir) });
    }
    return found;
  }

  return {
    async list(names = []) {
      const stacks: (StackSummary & { created: number })[] = [];
      for (const { id, dir, meta } of await stackIds()) {
        if (meta?.copying) {
          // A copy cut short (the tab closed mid-way) is not a stack: it goes, freeing its room,
          // unless the copy is still being made.
          await deps.locks.withLock(id, async () => (await deps.stacksDir()).removeEntry(id, { recursive: true })).catch(() => {});
          // And the system image an import cut short was bringing with it.
          if (deps.root) await import('./stack-file/image-entries.ts').then(async ({ pruneImages }) => pruneImages(await deps.root!(), await deps.stacksDir(), folderSize)).catch(() => {});
          continue;
        }
        let name = meta?.name;
        const known = names.find((entry) => entry.id === id)?.name.trim();
        if (!name && known) {
          // The app's earlier list of names is recorded in the stack itself, once.
          name = known.slice(0, 60);
          await writeMeta(dir, { name, created_at: 0 }).catch(() => {});
        }
        stacks.push({ id, name: name ?? fallbackName(id), bytes: await folderSize(dir), created: meta?.created_at ?? 0 });
      }
      // The first stack first, then by age: the order the user made them in.
      stacks.sort((a, b) => (a.id === 'default' ? -1 : b.id === 'default' ? 1 : a.created - b.created || (a.id < b.id ? -1 : 1)));
      const estimate = await deps.estimate();
      return {
        stacks: stacks.map(({ id, name, bytes }) => ({ id, name, bytes })),
        usage: typeof estimate?.usage === 'number' ? estimate.usage : null,
        quota: typeof estimate?.quota === 'number' ? estimate.quota : null,
      };
    },

    async create(name) {
      const clean = checkName(name);
      const id = newId();
      const dir = await (await deps.stacksDir()).getDirectoryHandle(id, { create: true });
      try {
        await writeMeta(dir, { name: clean, created_at: now() });
      } catch (error) {
        await (await deps.stacksDir()).removeEntry(id, { recursive: true }).catch(() => {});
        throw fullOr(error, `"${clean}" was not created`);
      }
      return { id, name: clean, bytes: await folderSize(dir) };
    },

    async rename(stackId, name) {
      const clean = checkName(name);
      const dir = await folder(stackId);
      const meta = await readMeta(dir);
      try {
        await writeMeta(dir, { ...meta, name: clean, created_at: meta?.created_at ?? 0 });
      } catch (error) {
        throw fullOr(error, 'The new name was not saved');
      }
      return summary(stackId, dir);
    },

    async checkDuplicate(stackId, heldByCaller) {
      const dir = await folder(stackId);
      const { name, bytes } = await summary(stackId, dir);
      const refusal = noRoomMessage(`"${name}" was not duplicated`, bytes, await deps.estimate());
      if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
      // Open in another tab: said now, before the open stack here is closed for nothing.
      if (!heldByCaller) await whileStill(stackId, name, false, 'duplicate', async () => {});
    },

    async duplicate(stackId, name, heldByCaller) {
      const clean = checkName(name);
      const source = await folder(stackId);
      const from = await summary(stackId, source);
      return whileStill(stackId, from.name, heldByCaller, 'duplicate', async (signal) => {
        await finishRestore(source, { now, releaseWaitMs });
        // Measured again under the lock: what is copied is what is there now.
        const bytes = await folderSize(source);
        const refusal = noRoomMessage(`"${from.name}" was not duplicated`, bytes, await deps.estimate());
        if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
        const id = newId();
        const stacks = await deps.stacksDir();
        const copied = await deps.locks.withLock(id, async () => {
          const target = await stacks.getDirectoryHandle(id, { create: true });
          try {
            // Marked first: a copy cut short is never taken for a stack (list() removes it).
            await writeMeta(target, { name: clean, created_at: now(), copying: true });
            await copyFolder(source, target, signal, [[...META_DIR, META_FILE].join('/'), CHECKPOINTS_PATH]);
            await writeMeta(target, { name: clean, created_at: now() });
          } catch (error) {
            await stacks.removeEntry(id, { recursive: true }).catch(() => {});
            if (signal.aborted) throw new StackFolderError({ code: 'busy', message: `"${from.name}" was opened in another tab during the copy, so nothing was copied. Try again once it is closed.` });
            throw fullOr(error, `"${from.name}" was not duplicated`);
          }
          return summary(id, target);
        });
        if (!copied.held) throw new StackFolderError({ code: 'internal', message: 'The new stack id is in use; try again.' });
        return copied.value;
      });
    },

    async exportStack(stackId, options) {
      const dir = await folder(stackId);
      const { template, includeImage, ...rest } = options;
      const name = template ? checkName(template.name) : (await summary(stackId, dir)).name;
      try {
        // Only the tab that closed the stack for it (its databases copied, its computer saved) exports it whole; a template reads only files no worker holds.
        // The zip library and zstd load when a file is made or opened, not with the stack list.
        const { exportStack } = await import('./stack-file/export.ts');
        const image = includeImage && !template && deps.root ? { includeImage: { ...includeImage, root: await deps.root() } } : {};
        const written = await exportStack({ stack: dir, name, ...rest, ...image, ...(template ? { template: { description: template.description.trim().slice(0, 500) } } : {}) });
        return { name, bytes: written.bytes };
      } catch (error) {
        if (error instanceof StackFileError) throw new StackFolderError({ code: error.code === 'cancelled' ? 'aborted' : 'bad_request', message: error.message });
        throw fullOr(error, `"${name}" was not exported`);
      } finally {
        const system = await dir.getDirectoryHandle('.os').catch(() => null);
        await system?.removeEntry(SNAPSHOT_DIR.split('/')[1]!, { recursive: true }).catch(() => {});
      }
    },

    async exportContents(stackId) {
      const { exportContents } = await import('./stack-file/export-plan.ts');
      return exportContents(await folder(stackId));
    },

    async importStack(file, options) {
      const id = newId();
      const stacks = await deps.stacksDir();
      const made = await deps.locks.withLock(id, async () => {
        const target = await stacks.getDirectoryHandle(id, { create: true });
        try {
          // Unfinished until the last file passed its checks: list() removes what a killed tab left.
          await writeMeta(target, { name: 'Imported stack', created_at: now(), copying: true });
          const { importStackFile } = await import('./stack-file/import.ts');
          const imported = await importStackFile({
            ...(deps.root ? { root: await deps.root() } : {}),
            file,
            target,
            appImage: options.appImage,
            estimate: await deps.estimate(),
            signal: options.signal,
            allowLarge: options.allowLarge === true,
            ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          });
          // Made elsewhere: restricted until its owner reviews it (trust.ts), whatever the file
          // said of itself. Written before the stack counts, so no open ever sees it trusted.
          if (!options.builtIn) await writeConfig(target, TRUST_FILE, newTrustRecord(imported.manifest.template ? 'template_file' : 'stack_file', options.fileName ?? null, now()));
          // A name from the file is told apart from the stacks here: "Receipts" beside "Receipts" is "Receipts (imported)".
          const taken = (await stackIds()).filter((other) => other.id !== id && !other.meta?.copying).map((other) => other.meta?.name ?? fallbackName(other.id));
          const name = options.name ? checkName(options.name) : distinctName(checkName(shownName(imported.manifest.stack.name) || 'Imported stack'), taken);
          await writeMeta(target, { name, created_at: now() });
          return { stack: { id, name, bytes: Math.max(totalSize(imported.manifest), await folderSize(target)) }, layout: imported.layout };
        } catch (error) {
          // The file that failed its check lets go of its swap file a moment after it is aborted.
          await removeWhenReleased(stacks, id, releaseWaitMs).catch(() => {});
          if (error instanceof StackFileError) throw new StackFolderError({ code: error.code === 'cancelled' ? 'aborted' : error.code === 'storage' || error.code === 'too_large' ? error.code : 'bad_request', message: error.message });
          throw fullOr(error, 'The stack was not imported');
        }
      });
      if (!made.held) throw new StackFolderError({ code: 'internal', message: 'The new stack id is in use; try again.' });
      return made.value;
    },

    async saveResetPoint(stackId, heldByCaller) {
      const dir = await folder(stackId);
      const { name, bytes } = await summary(stackId, dir);
      const refusal = noRoomMessage(`The kiosk's starting point for "${name}" was not saved`, bytes, await deps.estimate());
      if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
      return whileStill(stackId, name, heldByCaller, 'make a kiosk of', async (signal) => {
        await finishRestore(dir, { now, releaseWaitMs });
        const points = await resetPoints();
        await points.removeEntry(stackId, { recursive: true }).catch(() => {});
        const point = await points.getDirectoryHandle(stackId, { create: true });
        try {
          await copyFolder(dir, point, signal, [CHECKPOINTS_PATH]);
          // Written last: a point cut short has no mark and is never reset to.
          await (await point.getFileHandle(POINT_DONE, { create: true })).createWritable().then((writable) => writable.close());
        } catch (error) {
          await points.removeEntry(stackId, { recursive: true }).catch(() => {});
          throw fullOr(error, `The kiosk's starting point for "${name}" was not saved`);
        }
        return { bytes: await folderSize(point) };
      });
    },

    async resetToPoint(stackId, heldByCaller) {
      const dir = await folder(stackId);
      const point = await (await resetPoints()).getDirectoryHandle(stackId).catch(() => null);
      if (!point || !(await point.getFileHandle(POINT_DONE).then(() => true, () => false))) {
        throw new StackFolderError({ code: 'not_found', message: 'This kiosk has no starting point to return to: its owner must set kiosk mode up again.' });
      }
      const { name } = await summary(stackId, dir);
      return whileStill(stackId, name, heldByCaller, 'reset', async (signal) => {
        // Everything the visitor left goes (not hidden), then the point comes back whole. A reset
        // cut short (a power cut) is done again at the next open, which always resets a kiosk.
        for (const child of await childNames(dir)) await removeWhenReleased(dir, child, releaseWaitMs);
        await copyFolder(point, dir, signal, POINT_DONE);
        return { bytes: await folderSize(dir) };
      });
    },

    async dropResetPoint(stackId) {
      await (await resetPoints()).removeEntry(stackId, { recursive: true }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    },

    async restoreCheckpoint(stackId, checkpointId, options) {
      const dir = await folder(stackId);
      const { name } = await summary(stackId, dir);
      return whileStill(stackId, name, options.heldByCaller, 'restore', async (signal) => {
        // What is kept first below must be a whole stack, not one a killed tab left part-way.
        await finishRestore(dir, { now, releaseWaitMs });
        const store = await openCheckpointStore(dir, { now });
        const target = await store.get(checkpointId).catch(checkpointRefusal);
        const refusal = noRoomMessage(`"${name}" was not restored`, target.total_bytes, await deps.estimate());
        if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
        // The stack as it is now, kept first: what the restore replaces can be brought back.
        const newest = (await store.list())[0];
        const sources = await checkpointSources(dir, { databases: null, capture: null, ...(newest ? { previous: newest.files } : {}) });
        const before = await store
          .take({ reason: 'before_restore', label: `Before going back to ${new Date(target.created_at).toLocaleString()}`, layout: options.layout, sources, ...checkpointKinds })
          .catch((error: unknown) => Promise.reject(fullOr(error, `"${name}" was not restored (the stack as it is now could not be kept first)`)));
        const replaceWith = (id: string) => replaceWithCheckpoint(dir, store, id, { signal, waitMs: releaseWaitMs, name });
        try {
          await replaceWith(checkpointId);
        } catch (error) {
          // Half a restore is no stack: put back what it was (marked in turn, so a kill meanwhile
          // still ends with the stack as it was).
          await replaceWith(before.id).catch(() => {});
          if (error instanceof CheckpointError) checkpointRefusal(error);
          throw fullOr(error, `"${name}" was not restored; it is as it was`);
        }
        return { layout: target.layout };
      });
    },

    async stackFromCheckpoint(stackId, checkpointId, name) {
      const clean = checkName(name);
      const source = await folder(stackId);
      // A reader: the stack may be open, its worker taking checkpoints beside this.
      const store = await openCheckpointStore(source, { now, owner: false });
      const record = await store.get(checkpointId).catch(checkpointRefusal);
      const refusal = noRoomMessage(`"${clean}" was not made`, record.total_bytes, await deps.estimate());
      if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
      const id = newId();
      const stacks = await deps.stacksDir();
      const made = await deps.locks.withLock(id, async (signal) => {
        const target = await stacks.getDirectoryHandle(id, { create: true });
        try {
          await writeMeta(target, { name: clean, created_at: now(), copying: true });
          await store.restoreInto(checkpointId, target, { signal, skip: keptThroughRestore });
          await writeMeta(target, { name: clean, created_at: now() });
        } catch (error) {
          await removeWhenReleased(stacks, id, releaseWaitMs).catch(() => {});
          if (error instanceof CheckpointError) checkpointRefusal(error);
          throw fullOr(error, `"${clean}" was not made`);
        }
        return { stack: await summary(id, target), layout: record.layout };
      });
      if (!made.held) throw new StackFolderError({ code: 'internal', message: 'The new stack id is in use; try again.' });
      return made.value;
    },

    async remove(stackId, heldByCaller) {
      const dir = await folder(stackId);
      const { name, bytes } = await summary(stackId, dir);
      const others = (await stackIds()).filter((stack) => stack.id !== stackId && !stack.meta?.copying);
      if (others.length === 0) throw new StackFolderError({ code: 'bad_request', message: `"${name}" is the only stack here: make another one before deleting it.` });
      return whileStill(stackId, name, heldByCaller, 'delete', async () => {
        await removeWhenReleased(await deps.stacksDir(), stackId, releaseWaitMs);
        // A system image only this stack ran on goes with it.
        const { pruneImages } = await import('./stack-file/image-entries.ts');
        const images = deps.root ? await pruneImages(await deps.root(), await deps.stacksDir(), folderSize).catch(() => 0) : 0;
        return { freed: bytes + images };
      });
    },
  };
}

/** A name as the user gave it, trimmed and at most 60 characters; refused when empty. */
export function checkName(name: unknown): string {
  const clean = typeof name === 'string' ? name.trim().replace(/\s+/g, ' ').slice(0, 60) : '';
  if (!clean) throw new StackFolderError({ code: 'bad_request', message: 'A stack needs a name.' });
  return clean;
}

/**
 * `name`, else "name (imported)", "name (imported 2)", …: the first no stack in `taken` has (case
 * and Unicode forms aside), within the 60 characters a name may have.
 */
export function distinctName(name: string, taken: readonly string[]): string {
  const fold = (text: string) => text.normalize('NFC').toLowerCase();
  const used = new Set(taken.map(fold));
  if (!used.has(fold(name))) return name;
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? ' (imported)' : ` (imported ${n})`;
    const candidate = `${name.slice(0, 60 - suffix.length).trimEnd()}${suffix}`;
    if (!used.has(fold(candidate))) return candidate;
  }
}

/** A name from a file as it will be shown: without control characters or ones that turn the text's direction around. */
function shownName(name: string): string {
  return name.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g, '').normalize('NFC').trim();
}

function fallbackName(stackId: string): string {
  return stackId === 'default' ? DEFAULT_NAME : stackId;
}

function fullOr(error: unknown, what: string): unknown {
  if (error instanceof StackFolderError) return error;
  if (isStorageFull(error)) return new StackFolderError({ code: 'storage', message: storageFullMessage(what) });
  return error;
}

/** The sum of the sizes of every file under `dir`. Files held open by a worker are read too. */
export async function folderSize(dir: FileSystemDirectoryHandle): Promise<number> {
  let total = 0;
  for await (const [, handle] of entriesOf(dir)) {
    if (handle.kind === 'directory') total += await folderSize(handle as FileSystemDirectoryHandle);
    else total += await (handle as FileSystemFileHandle).getFile().then((file) => file.size, () => 0);
  }
  return total;
}

/**
 * Copies every file and folder of `from` into `to`, whatever they are (databases, user files, the
 * computer's disk and state), streaming each file; `skip` is a path not to copy. Stops when
 * `signal` aborts.
 */
export async function copyFolder(from: FileSystemDirectoryHandle, to: FileSystemDirectoryHandle, signal: AbortSignal, skip: string | string[] = [], prefix = ''): Promise<void> {
  for await (const [name, handle] of entriesOf(from)) {
    if (signal.aborted) throw signal.reason;
    const path = prefix ? `${prefix}/${name}` : name;
    if (typeof skip === 'string' ? path === skip : skip.includes(path)) continue;
    if (handle.kind === 'directory') {
      await copyFolder(handle as FileSystemDirectoryHandle, await to.getDirectoryHandle(name, { create: true }), signal, skip, path);
      continue;
    }
    const file = await (handle as FileSystemFileHandle).getFile();
    const writable = await (await to.getFileHandle(name, { create: true })).createWritable();
    try {
      // pipeTo closes the writable when the file is read through, which commits it.
      await file.stream().pipeTo(writable, { signal });
    } catch (error) {
      await writable.abort().catch(() => {});
      throw error;
    }
  }
}

function checkpointRefusal(error: unknown): never {
  if (error instanceof CheckpointError) throw new StackFolderError({ code: error.code === 'not_found' ? 'not_found' : 'storage', message: error.message });
  throw error;
}

/**
 * Makes a still stack exactly checkpoint `id`: its files go, then the checkpoint's are written.
 * The stack's record names the checkpoint from before the first file goes until the last is
 * written, so a restore cut short (a killed tab, a power cut) is finished by `finishRestore` at
 * the next open rather than leaving half a stack. `name`: the record's name when it has none.
 */
async function replaceWithCheckpoint(dir: FileSystemDirectoryHandle, store: CheckpointStore, id: string, options: { signal?: AbortSignal; waitMs: number; name: string }): Promise<void> {
  const meta = (await readMeta(dir)) ?? { name: options.name, created_at: 0 };
  await writeMeta(dir, { ...meta, restoring: id });
  await clearForRestore(dir, '', options.waitMs);
  await store.restoreInto(id, dir, options.signal ? { signal: options.signal } : {});
  const { restoring: _, ...done } = (await readMeta(dir)) ?? meta;
  await writeMeta(dir, done);
}

/**
 * Finishes a restore a killed tab left part-way (the stack's record still names its checkpoint):
 * the stack is made that checkpoint again, whole (doing it twice does no harm). Only for a still
 * stack whose lock the caller holds, before anything opens its files: the stack worker calls it
 * as it starts, the stacks worker before it copies or restores a stack. Returns the checkpoint's
 * id, or null when no restore was under way. A checkpoint that is gone or damaged cannot be
 * finished: the mark is dropped and the stack opens as it lies (said on the console).
 */
export async function finishRestore(dir: FileSystemDirectoryHandle, options: { now?: () => number; releaseWaitMs?: number } = {}): Promise<string | null> {
  const meta = await readMeta(dir);
  if (!meta?.restoring) return null;
  const id = meta.restoring;
  const store = await openCheckpointStore(dir, options.now ? { now: options.now } : {});
  try {
    await replaceWithCheckpoint(dir, store, id, { waitMs: options.releaseWaitMs ?? 10_000, name: meta.name });
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    console.error(`A restore of checkpoint ${id} was cut short and cannot be finished: ${error.message}`);
    const { restoring: _, ...rest } = meta;
    await writeMeta(dir, rest);
  }
  return id;
}

/** Removes every file and folder of a stack a restore replaces (all but its record, secrets and checkpoints). */
async function clearForRestore(dir: FileSystemDirectoryHandle, prefix: string, waitMs: number): Promise<void> {
  const children: [string, FileSystemHandle][] = [];
  for await (const entry of entriesOf(dir)) children.push(entry);
  for (const [name, handle] of children) {
    const path = prefix ? `${prefix}/${name}` : name;
    if (keptThroughRestore(path)) continue;
    if (handle.kind === 'directory' && (path === '.os' || path === '.os/config')) await clearForRestore(handle as FileSystemDirectoryHandle, path, waitMs);
    else await removeWhenReleased(dir, name, waitMs);
  }
}

/** The mark a complete kiosk reset point carries (written last). */
const POINT_DONE = '.reset-point-complete';

async function childNames(dir: FileSystemDirectoryHandle): Promise<string[]> {
  const names: string[] = [];
  for await (const [name] of entriesOf(dir)) names.push(name);
  return names;
}

/**
 * Removes `stacks/<id>/`. A worker just stopped (the tab's own stack, or its computer) releases
 * its files' access handles a moment later, and until then removing fails: it is retried.
 */
async function removeWhenReleased(stacks: FileSystemDirectoryHandle, stackId: string, waitMs: number): Promise<void> {
  const started = Date.now();
  for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
    try {
      await stacks.removeEntry(stackId, { recursive: true });
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      const held = error instanceof DOMException && (error.name === 'NoModificationAllowedError' || error.name === 'InvalidModificationError');
      if (!held || Date.now() - started > waitMs) {
        if (held) throw new StackFolderError({ code: 'busy', message: 'Some of its files are still in use; close the tabs that show it, then try again.' });
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'NotFoundError';
}

/** Locks over the Web Locks API (available in workers): the same locks the tabs hold. */
export function webStackLocks(locks: LockManager, lockName: (stackId: string) => string): StackLocks {
  return {
    async withLock(stackId, work) {
      const controller = new AbortController();
      let running: Promise<unknown> | null = null;
      try {
        return await locks.request(lockName(stackId), { ifAvailable: true }, async (lock) => {
          if (!lock) return { held: false as const };
          const value = work(controller.signal);
          running = value;
          return { held: true as const, value: await value };
        });
      } catch (error) {
        if (!running) throw error;
        // Another tab took the lock over ("Use it here"): the work stops, undoes itself, and says why.
        controller.abort(error);
        const failure = await (running as Promise<unknown>).then(() => error, (reason: unknown) => reason);
        throw failure;
      }
    },
  };
}
