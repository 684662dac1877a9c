// What the stack menu does: create, rename, duplicate and delete stacks. The stacks worker does
// the work on the folders; this decides the order around the stack open in this tab, which is
// closed (its files made still) before it is copied, and stopped before it is deleted.
import type { StackSummary } from '../../protocol/stacks-api.ts';
import type { StacksClient } from './stacks-client.ts';

export interface StackActionsDeps {
  stacks: StacksClient;
  /** The stack this tab shows (this tab holds its lock). */
  currentId: string;
  /**
   * Closes the stack open here. `copy`: its worker first saves the computer and closes the
   * databases (the `close` request), then stops; `export`: the same, with consistent copies of
   * the databases made first; `delete`: it just stops.
   */
  closeCurrent(mode: 'copy' | 'export' | 'delete'): Promise<void>;
  /** Opens a stack in this tab (a new page). */
  open(stackId: string): void;
  /** Lists a new stack by its name at once (the next page names it before the stacks worker answers). */
  remember(stack: StackSummary): void;
  /** The page's own keys of a stack (its window layout…): copied with it, forgotten with it. */
  copyPageKeys(from: string, to: string): void;
  forgetStack(stackId: string): void;
  /** The page's canvas layout of a stack (JSON), carried in its `.stack` file; null when none. */
  layoutOf(stackId: string): string | null;
  setLayout(stackId: string, layout: string): void;
  /** Asks the browser to keep this site's storage (asked when a stack is made). */
  askToKeep(): Promise<unknown>;
}

/** A failure after the open stack was closed for it: the page must open a stack again. */
export class StackClosedError extends Error {
  override readonly name = 'StackClosedError';
}

export function createStackActions(deps: StackActionsDeps) {
  const { stacks, currentId } = deps;
  return {
    /** Makes a new, empty stack and opens it. */
    async create(name: string): Promise<StackSummary> {
      await deps.askToKeep();
      const made = await stacks.create(name);
      deps.remember(made);
      deps.open(made.id);
      return made;
    },

    rename: (stackId: string, name: string) => stacks.rename(stackId, name),

    /**
     * Copies a stack into a new one named `name` and opens the copy. Whether it fits (and is not
     * open elsewhere) is asked before the open stack is closed; a failure after that throws
     * StackClosedError.
     */
    async duplicate(stackId: string, name: string): Promise<StackSummary> {
      const current = stackId === currentId;
      await stacks.checkDuplicate(stackId, { heldByCaller: current });
      if (current) await deps.closeCurrent('copy');
      let copy: StackSummary;
      try {
        copy = await stacks.duplicate(stackId, name, { heldByCaller: current });
      } catch (error) {
        if (!current) throw error;
        throw new StackClosedError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      deps.copyPageKeys(stackId, copy.id);
      deps.remember(copy);
      deps.open(copy.id);
      return copy;
    },

    /**
     * Writes the stack open here as one `.stack` file: closed first (its computer saved, its
     * databases copied whole), then streamed to `target` (null: a file to download). The stack
     * stays closed after: the page opens it again. `includeImage`: the computer's system image goes
     * in too, so the file opens in an app with another image. `includeSecrets`: the MCP header and
     * env values (ids from `exportContents`) the user ticked; the others are left out. Any failure
     * throws StackClosedError.
     */
    async exportCurrent(target: FileSystemFileHandle | null, job: string, onProgress: (done: number, total: number) => void, choices: { includeImage?: boolean; includeSecrets?: string[] } = {}) {
      const { includeImage = false, includeSecrets = [] } = choices;
      // The export starts beside the closing: the files it leaves alone are packed meanwhile.
      const closing = deps.closeCurrent('export');
      const exporting = stacks.exportStack(currentId, { layout: deps.layoutOf(currentId), target, job, includeSecrets, ...(includeImage ? { includeImage } : {}) }, onProgress, () => closing);
      try {
        await closing;
      } catch (error) {
        // Not closed (the agent is working…): the stack stays open, and the export is dropped.
        await stacks.cancel(job);
        await exporting.catch(() => {});
        throw error;
      }
      try {
        return await exporting;
      } catch (error) {
        throw new StackClosedError(error instanceof Error ? error.message : String(error), { cause: error });
      }
    },

    /** What an export of the stack open here would hold, asked while it stays open. */
    exportContents: () => stacks.exportContents(currentId),

    /**
     * Makes a new stack from a `.stack` file (or a template, then named `name`) and opens it; the
     * stack open here is left as it is. It opens restricted (its owner reviews what it brought)
     * unless `builtIn`: a template the app ships. `allowLarge`: the user said yes to a file over
     * the import ceiling (refused first with the code `too_large`).
     */
    async importFile(file: Blob, job: string, onProgress: (done: number, total: number) => void, options: { name?: string; builtIn?: boolean; allowLarge?: boolean } = {}): Promise<StackSummary> {
      await deps.askToKeep();
      const fileName = file instanceof File && file.name ? file.name : undefined;
      const { stack, layout } = await stacks.importStack(
        file,
        { job, ...(options.name ? { name: options.name } : {}), ...(fileName ? { fileName } : {}), ...(options.builtIn ? { builtIn: true } : {}), ...(options.allowLarge ? { allowLarge: true } : {}) },
        onProgress,
      );
      if (layout !== null) deps.setLayout(stack.id, layout);
      deps.remember(stack);
      deps.open(stack.id);
      return stack;
    },

    /**
     * Writes a template of the stack open here (its makings, none of its history, uploads or
     * secrets) to `target` (null: a file to download). The stack stays open.
     */
    saveTemplate(template: { name: string; description: string }, target: FileSystemFileHandle | null, job: string) {
      return stacks.exportStack(currentId, { layout: deps.layoutOf(currentId), target, job, template });
    },

    /**
     * Brings the stack open here back to one of its checkpoints (the user confirmed): closed
     * first, restored by the stacks worker (which keeps it as it was as a checkpoint), then
     * opened again. A failure after the close throws StackClosedError.
     */
    async restoreCheckpoint(checkpointId: string): Promise<void> {
      await deps.closeCurrent('copy');
      try {
        const { layout } = await stacks.restoreCheckpoint(currentId, checkpointId, { heldByCaller: true, layout: deps.layoutOf(currentId) });
        if (layout !== null) deps.setLayout(currentId, layout);
      } catch (error) {
        throw new StackClosedError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      deps.open(currentId);
    },

    /** Opens a checkpoint of the stack open here as a new stack named `name`; this one is left as it is. */
    async openCheckpoint(checkpointId: string, name: string): Promise<StackSummary> {
      await deps.askToKeep();
      const { stack, layout } = await stacks.stackFromCheckpoint(currentId, checkpointId, name);
      if (layout !== null) deps.setLayout(stack.id, layout);
      deps.remember(stack);
      deps.open(stack.id);
      return stack;
    },

    /**
     * Deletes a stack (the user confirmed). The open one is stopped first and another opened after;
     * `others`: the stacks left, the first of which opens then.
     */
    async remove(stackId: string, others: StackSummary[]): Promise<{ freed: number }> {
      const current = stackId === currentId;
      const next = others.find((stack) => stack.id !== stackId);
      if (current) {
        if (!next) throw new Error('This is the only stack here: make another one before deleting it.');
        await deps.closeCurrent('delete');
      }
      let freed: { freed: number };
      try {
        freed = await stacks.remove(stackId, { heldByCaller: current });
      } catch (error) {
        if (!current) throw error;
        throw new StackClosedError(error instanceof Error ? error.message : String(error), { cause: error });
      }
      deps.forgetStack(stackId);
      if (current) deps.open(next!.id);
      return freed;
    },
  };
}

export type StackActions = ReturnType<typeof createStackActions>;
