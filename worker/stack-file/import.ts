// Reads a `.stack` file into a new stack. The manifest comes first and is checked whole (format,
// version, paths, image, room) before anything is written; each file is then written into the
// new stack's folder, marked unfinished (`copying`, as a duplicate is) until the last one, while
// its size and sha256 are checked. A refusal, a cancel or a killed tab leaves no stack behind.
import { Unzip, UnzipInflate, type UnzipFile } from 'fflate';
import { createSHA256, type IHasher } from 'hash-wasm';
import { concatBytes } from '../../vm/bytes.ts';
import type { StorageEstimateLike } from '../storage-full.ts';
import { LAYOUT_NAME, MANIFEST_MAX_BYTES, MANIFEST_NAME, STACK_PREFIX, StackFileError, checkManifest, pathProblem, type ManifestEntry, type StackManifest } from './format.ts';

export interface ImportOptions {
  file: Blob;
  /** The new stack's folder, made empty and marked unfinished by the caller. */
  target: FileSystemDirectoryHandle;
  appImage: string | null;
  estimate: StorageEstimateLike | undefined;
  signal: AbortSignal;
  onProgress?(done: number, total: number): void;
  /** Called once the manifest passed its checks, before any file is written. */
  onManifest?(manifest: StackManifest): Promise<void>;
}

export interface Imported {
  manifest: StackManifest;
  layout: string | null;
}

/** The file is fed to the reader in slices this big: a bomb is caught within one slice's output. */
const SLICE = 64 * 1024;
const WRITE_BATCH = 1 << 20;

type Step = { kind: 'start'; entry: ManifestEntry } | { kind: 'data'; chunk: Uint8Array; final: boolean };

/** Throws StackFileError with a message for the user; the caller removes the target then. */
export async function importStackFile(options: ImportOptions): Promise<Imported> {
  const { signal } = options;
  const hasher = await createSHA256();
  let manifest: StackManifest | null = null;
  let manifestText: Uint8Array[] = [];
  let manifestBytes = 0;
  let failure: unknown = null;
  let first = true;
  const steps: Step[] = [];
  const finished = new Set<string>();
  let layout: string | null = null;

  const fail = (error: unknown) => {
    failure ??= error;
  };
  const unzip = new Unzip((file: UnzipFile) => {
    if (failure) return;
    if (first) {
      first = false;
      if (file.name !== MANIFEST_NAME) return fail(new StackFileError('bad_file', 'This is not a Stackdocs stack file: it does not start with a manifest.'));
      file.ondata = (error, data, final) => {
        if (failure) return;
        if (error) return fail(damaged());
        manifestBytes += data.byteLength;
        if (manifestBytes > MANIFEST_MAX_BYTES) {
          file.terminate();
          return fail(new StackFileError('bad_file', 'This is not a Stackdocs stack file: its manifest is far too large.'));
        }
        manifestText.push(data);
        if (final) {
          try {
            manifest = checkManifest(new TextDecoder().decode(concatBytes(...manifestText)), { appImage: options.appImage, estimate: options.estimate });
          } catch (problem) {
            fail(problem);
          }
          manifestText = [];
        }
      };
      file.start();
      return;
    }
    const problem = pathProblem(file.name);
    if (problem) return fail(new StackFileError('bad_file', `This stack file is refused: ${problem}.`));
    const entry = manifest?.entries.find((listed) => listed.path === file.name);
    if (!entry) return fail(new StackFileError('bad_file', `This stack file is refused: "${file.name}" is not in its manifest.`));
    if (finished.has(entry.path) || steps.some((step) => step.kind === 'start' && step.entry === entry)) {
      return fail(new StackFileError('bad_file', `This stack file is refused: "${file.name}" is in it twice.`));
    }
    let inflated = 0;
    steps.push({ kind: 'start', entry });
    file.ondata = (error, data, final) => {
      if (failure) return;
      if (error) return fail(damaged());
      inflated += data.byteLength;
      if (inflated > entry.size) {
        // A zip bomb, or a damaged file: either way nothing past the declared size is read.
        file.terminate();
        return fail(new StackFileError('damaged', `This stack file is refused: "${entry.path}" unpacks to more than the ${entry.size} bytes its manifest declares.`));
      }
      steps.push({ kind: 'data', chunk: data, final });
    };
    file.start();
  });
  unzip.register(UnzipInflate);

  let writing: EntryWriter | null = null;
  let manifestAnnounced = false;
  const reader = options.file.stream().getReader();
  let read = 0;
  try {
    for (;;) {
      if (signal.aborted) throw new StackFileError('cancelled', 'The import was cancelled; no stack was made.');
      const { done, value } = await reader.read();
      if (done) break;
      for (let at = 0; at < value.byteLength && !failure; at += SLICE) {
        try {
          unzip.push(value.subarray(at, at + SLICE), false);
        } catch {
          fail(damaged());
        }
        if (failure) break;
        if (manifest && !manifestAnnounced) {
          manifestAnnounced = true;
          await options.onManifest?.(manifest);
        }
        // What this slice unpacked is written now, before more is read.
        for (const step of steps.splice(0)) {
          if (step.kind === 'start') {
            writing = await EntryWriter.open(options.target, step.entry, hasher);
            continue;
          }
          if (!writing) throw damaged();
          await writing.write(step.chunk);
          if (step.final) {
            const bytes = await writing.finish();
            if (writing.entry.path === LAYOUT_NAME) layout = readLayout(bytes!);
            finished.add(writing.entry.path);
            writing = null;
          }
        }
      }
      if (failure) throw failure;
      read += value.byteLength;
      options.onProgress?.(read, options.file.size);
    }
    try {
      unzip.push(new Uint8Array(0), true);
    } catch {
      // A file cut short inside an entry: counted below as missing.
    }
    if (failure) throw failure;
    if (!manifest) throw new StackFileError('bad_file', 'This is not a Stackdocs stack file: it has no manifest.');
    const missing = (manifest as StackManifest).entries.filter((entry) => !finished.has(entry.path));
    if (missing.length) {
      throw new StackFileError(
        'damaged',
        `This stack file ends early: ${missing.length} of its ${(manifest as StackManifest).entries.length} files are missing or cut short (the first: "${missing[0]!.path}"). It was not copied whole; export it again.`,
      );
    }
    return { manifest, layout };
  } catch (error) {
    await (writing as EntryWriter | null)?.abort();
    await reader.cancel().catch(() => {});
    throw error;
  }
}

/** The page's layout: any JSON object (the page's own store checks its fields when it loads it). */
function readLayout(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(bytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new StackFileError('bad_file', 'This stack file is refused: its canvas layout is not readable.');
  return text;
}

function damaged(): StackFileError {
  return new StackFileError('damaged', 'This stack file is damaged: part of it cannot be unpacked.');
}

/** One entry on its way into the stack's folder (or, for the layout, into memory), hashed as it goes. */
class EntryWriter {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private size = 0;
  /** The batch being written: one at a time, while the next is unpacked and hashed. */
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly entry: ManifestEntry,
    private readonly hasher: IHasher,
    private readonly writable: FileSystemWritableFileStream | null,
    private readonly kept: Uint8Array[] | null,
  ) {}

  static async open(target: FileSystemDirectoryHandle, entry: ManifestEntry, hasher: IHasher): Promise<EntryWriter> {
    hasher.init();
    if (entry.path === LAYOUT_NAME) return new EntryWriter(entry, hasher, null, []);
    const parts = entry.path.slice(STACK_PREFIX.length).split('/');
    let dir = target;
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
    const handle = await dir.getFileHandle(parts.at(-1)!, { create: true });
    return new EntryWriter(entry, hasher, await handle.createWritable(), null);
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.hasher.update(chunk);
    this.size += chunk.byteLength;
    if (this.kept) {
      this.kept.push(chunk);
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.byteLength;
    if (this.pendingBytes >= WRITE_BATCH) await this.flush();
  }

  /**
   * Hands the batch to the file and returns once the one before it is written: unpacking and
   * hashing go on while the browser writes, and a write's failure (a full disk) surfaces at the
   * next batch or at finish().
   */
  private async flush(): Promise<void> {
    if (!this.pendingBytes || !this.writable) return;
    const joined = concatBytes(...this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    await this.writing;
    this.writing = this.writable.write(joined as Uint8Array<ArrayBuffer>);
    this.writing.catch(() => {}); // awaited at the next flush or at finish()
  }

  /** Checks size and checksum; the file counts (its writable closes) only when both match. */
  async finish(): Promise<Uint8Array | null> {
    if (this.size !== this.entry.size) {
      await this.abort();
      throw new StackFileError('damaged', `This stack file is damaged: "${this.entry.path}" has ${this.size} bytes, its manifest says ${this.entry.size}.`);
    }
    if (this.hasher.digest('hex') !== this.entry.sha256) {
      await this.abort();
      throw new StackFileError('damaged', `This stack file is damaged: "${this.entry.path}" does not match its checksum.`);
    }
    if (this.kept) return concatBytes(...this.kept);
    await this.flush();
    await this.writing;
    await this.writable!.close();
    return null;
  }

  async abort(): Promise<void> {
    await this.writing.catch(() => {});
    await this.writable?.abort().catch(() => {});
  }
}
