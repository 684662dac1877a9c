// What a stack is built from: its storage, files and databases, and what the worker entry (or a
// test) gives it — fetch, the model stream, pdfjs, OCR, the computer's maker. createStack (stack.ts)
// takes these; its capabilities take the parts they need.
import type { StackMemory } from '../memory/index.ts';
import type { ComputerStatus } from '../protocol/computer.ts';
import type { Settings } from '../protocol/settings.ts';
import type { CompactionPolicy } from './agent/compaction.ts';
import type { StreamFn } from './agent/types.ts';
import type { DatabaseCopies } from './checkpoints/sources.ts';
import type { Computer, ComputerNetwork } from './computer.ts';
import type { DeviceCredentials } from './device.ts';
import type { OcrEngine } from './documents/ocr.ts';
import type { PdfOpener, PdfPageRenderer } from './documents/pdf-text.ts';
import type { ModelConnection } from './model-health.ts';
import type { StackStorage } from '../storage/json-files.ts';
import type { UserFiles } from './user-files.ts';

export interface StackDeps {
  storage: StackStorage;
  files: UserFiles;
  /** The stack's databases and memory files (memory/). */
  memory: StackMemory;
  defaults: Settings;
  fetch: typeof fetch;
  /** Builds the model stream for a connection; swapped for a fake in unit tests. */
  createStream(connection: ModelConnection): StreamFn;
  /** pdfjs, in its own worker in the browser; in-process in Node tests. */
  openPdf: PdfOpener;
  /** tesseract.js with the app's own English data. */
  ocr: OcrEngine;
  /** Draws a scanned PDF's pages for OCR (browser only). */
  renderPdfPages?: PdfPageRenderer;
  /**
   * Makes the stack's Linux computer (vm/), given where its status goes and how it reaches the
   * network (the proxy's relay, for a paired device, unless turned off in Settings); absent in
   * tests, then bash says so.
   */
  createComputer?: (emitStatus: (status: ComputerStatus) => void, network: () => Promise<ComputerNetwork>) => Computer;
  newId?: (prefix: string) => string;
  /** This browser's proxy credentials, shared by its stacks; in memory when absent (tests). */
  credentials?: DeviceCredentials;
  /** The name this browser pairs under, e.g. "Stackdocs in Chrome on Linux". */
  deviceLabel?: string;
  /** A new playing of the recorded demo; tests play it without the human pace. */
  demoStream?: () => StreamFn;
  maxRetries?: number;
  compaction?: CompactionPolicy;
  /** Consistent copies of both databases for an export (`.os/snapshot/`), replacing older ones. */
  snapshotDatabases?: () => Promise<void>;
  /** Consistent copies of both databases in memory, for a checkpoint. */
  copyDatabases?: () => Promise<DatabaseCopies>;
  /** The stack's folder in OPFS; with copyDatabases, the stack keeps checkpoints there. */
  stackDir?: () => Promise<FileSystemDirectoryHandle>;
}
