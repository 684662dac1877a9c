// What the parts of the stack folders share (stack-folders.ts and its -file, -kiosk and -restore
// modules): the API they make up, the error they answer with, and a small context over the deps:
// a stack's folder by id, its summary, and work on it while it is still.
import type { ErrorShape } from '../protocol/errors.ts';
import type { ExportContents, StackSummary, StacksReport } from '../protocol/stacks-api.ts';
import type { FetchLike } from '../vm/image.ts';
import { isStackId } from '../storage/layout.ts';
import { entriesOf, isNotFound } from '../storage/opfs.ts';
import type { StorageEstimateLike } from '../storage/quota.ts';
import { folderSize } from '../storage/walk.ts';
import { isStorageFull, storageFullMessage } from './storage-full.ts';
import { readMeta, type StackMeta } from './stack-meta.ts';

const DEFAULT_NAME = 'My stack';

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

/** What each part of the stack folders works with. */
export interface FoldersContext {
  deps: StackFoldersDeps;
  newId(): string;
  now(): number;
  releaseWaitMs: number;
  /** A stack's folder; `not_found` when it is gone, `bad_request` for an id that is not one. */
  folder(stackId: string): Promise<FileSystemDirectoryHandle>;
  summary(stackId: string, dir: FileSystemDirectoryHandle): Promise<StackSummary>;
  /** Runs `work` on a still stack: under its lock, or as the caller who holds it. */
  whileStill<T>(stackId: string, name: string, heldByCaller: boolean, doing: string, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Every stack folder with its record (copies cut short included). */
  stackIds(): Promise<{ id: string; dir: FileSystemDirectoryHandle; meta: StackMeta | undefined }[]>;
}

export function foldersContext(deps: StackFoldersDeps): FoldersContext {
  return {
    deps,
    newId: deps.newId ?? (() => `s-${crypto.randomUUID().slice(0, 8)}`),
    now: deps.now ?? Date.now,
    releaseWaitMs: deps.releaseWaitMs ?? 10_000,

    async folder(stackId) {
      if (!isStackId(stackId)) throw new StackFolderError({ code: 'bad_request', message: `"${stackId}" is not a stack id.` });
      try {
        return await (await deps.stacksDir()).getDirectoryHandle(stackId);
      } catch (error) {
        if (isNotFound(error)) throw new StackFolderError({ code: 'not_found', message: 'That stack is not in this browser any more.' });
        throw error;
      }
    },

    async summary(stackId, dir) {
      const meta = await readMeta(dir);
      return { id: stackId, name: meta?.name ?? fallbackName(stackId), bytes: await folderSize(dir) };
    },

    async whileStill(stackId, name, heldByCaller, doing, work) {
      if (heldByCaller) return work(new AbortController().signal);
      const outcome = await deps.locks.withLock(stackId, work);
      if (!outcome.held) throw new StackFolderError({ code: 'busy', message: `"${name}" is open in another tab. Close it there (or open it here) first, then ${doing} it.` });
      return outcome.value;
    },

    async stackIds() {
      const found: { id: string; dir: FileSystemDirectoryHandle; meta: StackMeta | undefined }[] = [];
      for await (const [id, handle] of entriesOf(await deps.stacksDir())) {
        if (handle.kind !== 'directory' || !isStackId(id)) continue;
        const dir = handle as FileSystemDirectoryHandle;
        found.push({ id, dir, meta: await readMeta(dir) });
      }
      return found;
    },
  };
}

/** A name as the user gave it, trimmed and at most 60 characters; refused when empty. */
export function checkName(name: unknown): string {
  const clean = typeof name === 'string' ? name.trim().replace(/\s+/g, ' ').slice(0, 60) : '';
  if (!clean) throw new StackFolderError({ code: 'bad_request', message: 'A stack needs a name.' });
  return clean;
}

export function fallbackName(stackId: string): string {
  return stackId === 'default' ? DEFAULT_NAME : stackId;
}

/** `error` as the stack folders answer it: a full storage said so, about `what`. */
export function fullOr(error: unknown, what: string): unknown {
  if (error instanceof StackFolderError) return error;
  if (isStorageFull(error)) return new StackFolderError({ code: 'storage', message: storageFullMessage(what) });
  return error;
}

/** A refusal to go ahead because something will not fit (`noRoomMessage`), thrown. */
export function refuseNoRoom(refusal: string | null): void {
  if (refusal) throw new StackFolderError({ code: 'storage', message: refusal });
}

/**
 * Removes `parent/name` (a stack's folder, or one of its entries). A worker just stopped (the
 * tab's own stack, or its computer) releases its files' access handles a moment later, and until
 * then removing fails: it is retried for up to `waitMs`.
 */
export async function removeWhenReleased(parent: FileSystemDirectoryHandle, name: string, waitMs: number): Promise<void> {
  const started = Date.now();
  for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
    try {
      await parent.removeEntry(name, { recursive: true });
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
