// The API of the stacks worker: every stack in this browser (folders under OPFS `stacks/`), for the
// stack menu, Settings → Storage and stack files; and the Web Lock a tab holds on the stack it shows.

import type { ErrorShape } from './errors.ts';

/** A stack template shipped with the app, as `templates/index.json` lists it (templates/README.md). */
export interface TemplateInfo {
  slug: string;
  name: string;
  description: string;
  /** Its `.stack` file, relative to the app's base. */
  file: string;
  bytes: number;
}

/** The Web Lock a tab holds while it shows a stack; the stacks worker takes it to copy or delete one. */
export function stackLockName(stackId: string): string {
  return `stackdocs:stack:${stackId}`;
}

export interface StackSummary {
  id: string;
  name: string;
  /** The sum of the sizes of the files in its folder (databases, user files, the computer's). */
  bytes: number;
}

/** The stacks and the origin's storage: `usage` and `quota` from the browser, null when it does not say. */
export interface StacksReport {
  stacks: StackSummary[];
  usage: number | null;
  quota: number | null;
}

export type StacksResult<T> = { ok: true; value: T } | { ok: false; error: ErrorShape };

/** One part of what an export would carry, as the export dialog lists it. */
export interface ExportPart {
  kind: 'conversation' | 'memory' | 'files' | 'computer' | 'settings' | 'skills' | 'rules' | 'hooks' | 'mcp';
  /** In plain words, naming what is in it ("Skills: weekly, invoices", "/workspace/documents/: 3 files"). */
  label: string;
  files: number;
  /** Of the files as they are now; with `bytes_known` false, some are held open by the stack and not counted. */
  bytes: number;
  bytes_known: boolean;
}

/** What an export of a stack would hold, asked before it is written, and the secrets it leaves out unless ticked. */
export interface ExportContents {
  parts: ExportPart[];
  /** MCP servers' header and env values ("MCP server 'github': env GITHUB_TOKEN"): ids to hand back in `includeSecrets`. */
  secrets: { id: string; label: string }[];
}

/** What the stacks worker offers the app (comlink). Every method answers with a result; none rejects. */
export interface StacksApi {
  /** `names`: the app's earlier list of names (ids to names), recorded for stacks that have none. */
  list(names?: { id: string; name: string }[]): Promise<StacksResult<StacksReport>>;
  create(name: string): Promise<StacksResult<StackSummary>>;
  rename(stackId: string, name: string): Promise<StacksResult<StackSummary>>;
  /**
   * Refused with code `storage` (a message naming both sizes) when a copy of the stack will not
   * fit, with `busy` when it is open in another tab; else null. Asked before closing the open stack.
   */
  checkDuplicate(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<null>>;
  /**
   * Copies the stack's folder, every file of it, into a new stack named `name`. The stack must be
   * still: either not open anywhere (its Web Lock is taken for the copy) or `heldByCaller`: the
   * caller holds its lock and closed its worker first.
   */
  duplicate(stackId: string, name: string, options: { heldByCaller: boolean }): Promise<StacksResult<StackSummary>>;
  /** Deletes the stack's folder; refused for the last stack and for a stack open in another tab. */
  remove(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<{ freed: number }>>;
  /**
   * Writes the stack as one `.stack` file (docs/stack-file.md). The caller holds its lock and
   * closes it with `close {snapshot: true}`, first or meanwhile: `whenStill` resolves once that is
   * done, and the files the closing leaves alone are packed in the meantime. `target`: a file the user picked (File System
   * Access); null: the file is made in this origin's storage and handed back to be downloaded.
   * `job` names it for `cancel`; `onProgress` hears bytes done of the total. `template`: a
   * template of the stack instead (its makings, none of its history, uploads or secrets), named
   * and described so; the stack may stay open for that. `includeSecrets`: ids from
   * `exportContents` of MCP header and env values to carry; every other one is left out.
   */
  exportStack(
    stackId: string,
    options: { layout: string | null; target: FileSystemFileHandle | null; job: string; template?: { name: string; description: string }; includeImage?: boolean; includeSecrets?: string[] },
    onProgress?: (done: number, total: number) => void,
    whenStill?: () => Promise<void>,
  ): Promise<StacksResult<{ name: string; bytes: number; file: File | null }>>;
  /** What `exportStack` would write of the stack (open or not), and the secrets it leaves out unless named in `includeSecrets`. */
  exportContents(stackId: string): Promise<StacksResult<ExportContents>>;
  /**
   * Makes a new stack from a `.stack` file (or a template), named `name` or as the file says;
   * refused (with why) unless every check passes, leaving nothing. The new stack opens restricted
   * (worker/trust.ts) unless `builtIn`: a template the app itself ships.
   */
  importStack(file: Blob, options: { job: string; name?: string; fileName?: string; builtIn?: boolean; allowLarge?: boolean }, onProgress?: (done: number, total: number) => void): Promise<StacksResult<{ stack: StackSummary; layout: string | null }>>;
  /**
   * Kiosk mode: `saveResetPoint` copies the still stack whole as what every visitor starts from;
   * `resetToPoint` makes it exactly that again (the visitor's chat, uploads, windows, memory and
   * files gone); `dropResetPoint` forgets it. The caller holds the stack's lock (`heldByCaller`)
   * or the stack is open nowhere.
   */
  saveResetPoint(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<{ bytes: number }>>;
  resetToPoint(stackId: string, options: { heldByCaller: boolean }): Promise<StacksResult<{ bytes: number }>>;
  dropResetPoint(stackId: string): Promise<StacksResult<null>>;
  /**
   * Makes the still stack what it was at checkpoint `checkpointId` (the caller holds its lock
   * and closed its worker), keeping it as it is now as a checkpoint first (`layout`: its window
   * places then). Returns the checkpoint's layout.
   */
  restoreCheckpoint(stackId: string, checkpointId: string, options: { heldByCaller: boolean; layout: string | null }): Promise<StacksResult<{ layout: string | null }>>;
  /** Makes a new stack named `name` of a checkpoint of a stack (open or not), leaving that stack as it is. */
  stackFromCheckpoint(stackId: string, checkpointId: string, name: string): Promise<StacksResult<{ stack: StackSummary; layout: string | null }>>;
  /** Stops an export or import under way; it then fails with code `aborted`. */
  cancel(job: string): Promise<void>;
  /** Removes the file an export made for downloading, once the page has it. */
  forgetExport(): Promise<void>;
}
