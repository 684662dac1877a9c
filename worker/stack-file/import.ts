// Reads a `.stack` file into a new stack. The zip's central directory is read first (zip.js,
// from the end of the file), then the manifest, the first entry, is checked whole (format,
// version, paths, image, room) before anything is written; each file is then written into the
// new stack's folder, marked unfinished (`copying`, as a duplicate is) until the last one, while
// its size and sha256 are checked. A refusal, a cancel or a killed tab leaves no stack behind.
import { BlobReader, ZipReader, type Entry, type FileEntry } from '@zip.js/zip.js';
import { createSHA256, type IHasher } from 'hash-wasm';
import { concatBytes } from '../../vm/bytes.ts';
import type { StorageEstimateLike } from '../../storage/quota.ts';
import {
  CHECKSUMS_MAX_BYTES,
  CHECKSUMS_NAME,
  LAYOUT_NAME,
  MANIFEST_MAX_BYTES,
  MANIFEST_NAME,
  STACK_PREFIX,
  StackFileError,
  checkManifest,
  pathProblem,
  withChecksums,
  type ManifestEntry,
  type StackManifest,
} from './format.ts';
import { abandonImageImport, completeImageImport, IMAGE_MANIFEST, IMAGE_PREFIX, prepareImageImport, type ImageImport } from './image-entries.ts';
import { registerZstd, ZSTD_METHOD, ZstdSizeError, zstdUnpacking } from './zstd-codec.ts';
import { loadZstd } from '../zstd.ts';
import { inflating } from './bounded-inflate.ts';
import { openFileSink, type FileSink } from './file-sink.ts';
import { STACK_IMAGE_FILE } from '../../vm/stored-image.ts';
import { sha256Hex } from '../../storage/hash.ts';
import { writeJsonAt } from '../../storage/json-files.ts';
import { STACK_PATHS } from '../../storage/layout.ts';
import { JOURNAL, JOURNAL_MAX_BYTES } from '../../vm/opfs-workspace.ts';
import { snapshotProblem } from '../../vm/workspace-9p-snapshot.ts';

export interface ImportOptions {
  file: Blob;
  /** The new stack's folder, made empty and marked unfinished by the caller. */
  target: FileSystemDirectoryHandle;
  appImage: string | null;
  estimate: StorageEstimateLike | undefined;
  /** The user said yes to a stack over the import ceiling (format.ts importCeiling). */
  allowLarge?: boolean;
  signal: AbortSignal;
  onProgress?(done: number, total: number): void;
  /** Called once the manifest passed its checks, before any file is written. */
  onManifest?(manifest: StackManifest): Promise<void>;
  /** The OPFS root, where a system image the file includes is kept (`images/`). */
  root?: FileSystemDirectoryHandle;
}

export interface Imported {
  manifest: StackManifest;
  layout: string | null;
}

/** A zip's local file header starts every zip file. */
const ZIP_START = [0x50, 0x4b, 0x03, 0x04];

/** Throws StackFileError with a message for the user; the caller removes the target then. */
export async function importStackFile(options: ImportOptions): Promise<Imported> {
  const { signal } = options;
  const cancelled = () => new StackFileError('cancelled', 'The import was cancelled; no stack was made.');
  await registerZstd();
  const hasher = await createSHA256();
  // Each entry's local header must say what the central directory says, its name included: a
  // file whose two names differ opens as one thing in one program and another in the next.
  const zip = new ZipReader(new BlobReader(options.file), { useWebWorkers: false, checkLocalDirectory: true, checkLocalFilename: true });
  let writing: EntryWriter | null = null;
  let image: ImageImport | null = null;
  try {
    const entries = await listEntries(zip, options.file);
    const first = entries[0];
    if (!first || first.filename !== MANIFEST_NAME || first.directory) throw new StackFileError('bad_file', 'This is not a Stackdocs stack file: it does not start with a manifest.');
    const tooBig = () => new StackFileError('bad_file', 'This is not a Stackdocs stack file: its manifest is far too large.');
    const manifestText = new TextDecoder().decode(await readBounded(first, MANIFEST_MAX_BYTES, signal, tooBig));
    const checked = checkManifest(manifestText, { appImage: options.appImage, estimate: options.estimate, allowLarge: options.allowLarge === true });
    // Format 2 writes the checksums last, once each entry is written: read before anything else.
    const last = entries.length > 1 ? entries.at(-1)! : null;
    const sums = last?.filename === CHECKSUMS_NAME && !last.directory ? last : null;
    const sumsText = sums ? new TextDecoder().decode(await readBounded(sums, CHECKSUMS_MAX_BYTES, signal, () => new StackFileError('damaged', 'This stack file is damaged: its list of checksums is far too large.'))) : null;
    const manifest = withChecksums(checked, sumsText);
    if (signal.aborted) throw cancelled();
    await options.onManifest?.(manifest);
    if (manifest.includes_image) {
      // The image's manifest first: it names the image's files, and where they are kept.
      const found = entries.find((entry) => entry.filename === IMAGE_MANIFEST);
      const listedEntry = manifest.entries.find((entry) => entry.path === IMAGE_MANIFEST)!;
      if (!found || !options.root) throw new StackFileError('damaged', 'This stack file ends early: its system image is missing. It was not copied whole; export it again.');
      const bytes = await readBounded(found, MANIFEST_MAX_BYTES, signal, () => new StackFileError('damaged', "This stack file's system image is damaged: its manifest is far too large."));
      const digest = await sha256Hex(bytes);
      if (digest !== listedEntry.sha256 || bytes.byteLength !== listedEntry.size) throw new StackFileError('damaged', `This stack file is damaged: "${IMAGE_MANIFEST}" does not match its checksum.`);
      image = await prepareImageImport({ entries: manifest.entries, manifestBytes: bytes, recipe: manifest.image.recipe, appRecipe: options.appImage, root: options.root });
      if (image.recipe !== options.appImage) {
        // The stack runs on the image it came with (vm/stored-image.ts), from now on.
        await writeJsonAt(options.target, `${STACK_PATHS.vm}/${STACK_IMAGE_FILE}`, { recipe: image.recipe, folder: image.folder });
      }
    }

    const listed = new Map(manifest.entries.map((entry) => [entry.path, entry]));
    const finished = new Set<string>();
    let layout: string | null = null;
    const total = entries.reduce((sum, entry) => sum + entry.compressedSize, 0);
    let done = first.compressedSize;
    for (const found of entries.slice(1, sums ? -1 : undefined)) {
      if (signal.aborted) throw cancelled();
      const problem = pathProblem(found.filename);
      if (problem) throw new StackFileError('bad_file', `This stack file is refused: ${problem}.`);
      const entry = listed.get(found.filename);
      if (!entry || found.directory) throw new StackFileError('bad_file', `This stack file is refused: "${found.filename}" is not in its manifest.`);
      if (finished.has(entry.path)) throw new StackFileError('bad_file', `This stack file is refused: "${found.filename}" is in it twice.`);
      if (found.uncompressedSize > entry.size) throw tooLarge(entry);
      if (entry.path === JOURNAL_PATH && entry.size > JOURNAL_MAX_BYTES) throw new StackFileError('bad_file', `This stack file is refused: its computer's record of /workspace ("${JOURNAL_PATH}") claims ${entry.size} bytes.`);
      if (entry.path.startsWith(IMAGE_PREFIX) && !image?.target) {
        // Not needed here: this app serves that image, or this browser keeps it already.
        finished.add(entry.path);
        done += found.compressedSize;
        continue;
      }
      writing = await EntryWriter.open(entry.path.startsWith(IMAGE_PREFIX) ? image!.target! : options.target, entry, hasher);
      await unpackInto(found, writing, signal);
      const bytes = await writing.finish();
      writing = null;
      if (entry.path === LAYOUT_NAME) layout = readLayout(bytes!);
      if (entry.path === JOURNAL_PATH) await checkJournal(options.target);
      finished.add(entry.path);
      done += found.compressedSize;
      options.onProgress?.(done, total);
    }
    const missing = manifest.entries.filter((entry) => !finished.has(entry.path));
    if (missing.length) {
      throw new StackFileError(
        'damaged',
        `This stack file ends early: ${missing.length} of its ${manifest.entries.length} files are missing or cut short (the first: "${missing[0]!.path}"). It was not copied whole; export it again.`,
      );
    }
    if (image) await completeImageImport(image);
    return { manifest, layout };
  } catch (error) {
    await (writing as EntryWriter | null)?.abort();
    if (options.root) await abandonImageImport(image, options.root);
    if (signal.aborted && !(error instanceof StackFileError && error.code !== 'damaged')) throw cancelled();
    throw error;
  } finally {
    await zip.close().catch(() => {});
  }
}

/** The zip's entries from its central directory; a file that is not a whole zip is named as such. */
async function listEntries(zip: ZipReader<unknown>, file: Blob): Promise<FileEntry[]> {
  const start = new Uint8Array(await file.slice(0, 4).arrayBuffer());
  if (start.byteLength < 4 || ZIP_START.some((byte, at) => start[at] !== byte)) throw new StackFileError('bad_file', 'This is not a Stackdocs stack file: it is not a zip archive.');
  let entries: Entry[];
  try {
    entries = await zip.getEntries();
  } catch (error) {
    // zip.js refuses a name that leaves the folder ("..", absolute) before listing anything.
    const unsafe = (error as { filename?: unknown } | null)?.filename;
    if (typeof unsafe === 'string') throw new StackFileError('bad_file', `This stack file is refused: ${pathProblem(unsafe) ?? `"${unsafe}" is not a safe name`}.`);
    // The directory of a zip is at its end: a file cut short has none.
    throw new StackFileError('damaged', 'This stack file ends early: the list of its files, at its end, is missing. It was not copied whole; export it again.');
  }
  return entries as FileEntry[];
}

/** An entry whole in memory, refused (`tooBig`) past `limit` bytes. */
async function readBounded(entry: FileEntry, limit: number, signal: AbortSignal, tooBig: () => StackFileError): Promise<Uint8Array> {
  if (entry.uncompressedSize > limit) throw tooBig();
  const parts: Uint8Array[] = [];
  let size = 0;
  await entryData(
    entry,
    (chunk) => {
      size += chunk.byteLength;
      if (size > limit) throw tooBig();
      parts.push(chunk.slice());
    },
    signal,
  ).catch((error: unknown) => {
    throw error instanceof StackFileError ? error : pastDeclaredSize(error) ? tooBig() : damaged();
  });
  return concatBytes(...parts);
}

const DEFLATE = 8;

/**
 * An entry's unpacked bytes handed to `write` as they come, each waited for before more is
 * unpacked; `write` must not keep what it is given. zstd entries are unpacked a frame at a time,
 * each frame's memory freed once written (zstd-codec.ts), deflated ones a few KiB at a time
 * (bounded-inflate.ts), stored ones as they are read.
 */
async function entryData(found: FileEntry, write: (chunk: Uint8Array) => Promise<void> | void, signal: AbortSignal): Promise<void> {
  try {
    if (found.compressionMethod === ZSTD_METHOD) {
      const unpacking = zstdUnpacking(await loadZstd(), found.uncompressedSize, write);
      // zip.js may report its own failure to close the stream the refusal broke: the refusal is the news.
      await found.getData(unpacking.writable, { signal, passThrough: 'compressed' }).catch((error: unknown) => {
        throw unpacking.failure() ?? error;
      });
    }
    else if (found.compressionMethod === DEFLATE) await found.getData(inflating(write), { signal, passThrough: 'compressed' });
    else await found.getData(new WritableStream<Uint8Array>({ write }), { signal });
  } catch (error) {
    // zip.js names a local header that disagrees with the central directory an "Ambiguous archive".
    const reason = (error as { reason?: unknown } | null)?.reason;
    if ((error as Error | null)?.message !== 'Ambiguous archive' || typeof reason !== 'string') throw error;
    throw new StackFileError(
      'bad_file',
      reason.includes('filename')
        ? `This stack file is refused: the name written in front of "${found.filename}" differs from the one in its list of files, so it would open as one file here and another elsewhere.`
        : `This stack file is refused: the header in front of "${found.filename}" disagrees with its list of files (${reason}).`,
    );
  }
}

/** Streams an entry into its writer; unpacking stops at the first byte past the declared size. */
async function unpackInto(found: FileEntry, writing: EntryWriter, signal: AbortSignal): Promise<void> {
  let refusal: StackFileError | null = null;
  // A write that failed (the browser's storage full): the file is not at fault, and the user is told so.
  let writeFailure: { error: unknown } | null = null;
  let size = 0;
  const write = async (chunk: Uint8Array) => {
    size += chunk.byteLength;
    if (size > writing.entry.size) {
      // A zip bomb, or a damaged file: either way nothing past the declared size is read.
      refusal = tooLarge(writing.entry);
      throw refusal;
    }
    try {
      await writing.write(chunk);
    } catch (error) {
      writeFailure = { error };
      throw error;
    }
  };
  try {
    await entryData(found, write, signal);
  } catch (error) {
    if (refusal) throw refusal;
    if (writeFailure) throw (writeFailure as { error: unknown }).error;
    if (error instanceof StackFileError) throw error;
    if (signal.aborted) throw error;
    // The zstd codec stops before the frame that would pass the declared size (zip.js wraps its error).
    if (pastDeclaredSize(error)) throw tooLarge(writing.entry);
    throw damaged();
  }
}

function pastDeclaredSize(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof ZstdSizeError) return true;
  }
  return false;
}

function tooLarge(entry: ManifestEntry): StackFileError {
  return new StackFileError('damaged', `This stack file is refused: "${entry.path}" unpacks to more than the ${entry.size} bytes its manifest declares.`);
}

const JOURNAL_PATH = `${STACK_PREFIX}.os/vm/${JOURNAL}`;

/**
 * The share's journal names what the guest may reach of /workspace when its saved state wakes:
 * one whose fids leave /workspace or name `.os` (where the databases and secrets are) is refused.
 * The computer checks it again when it reads it.
 */
async function checkJournal(target: FileSystemDirectoryHandle): Promise<void> {
  const vm = await (await target.getDirectoryHandle('.os')).getDirectoryHandle('vm');
  let value: unknown;
  try {
    value = JSON.parse(await (await (await vm.getFileHandle(JOURNAL)).getFile()).text());
  } catch {
    value = null;
  }
  const problem = snapshotProblem(value);
  if (problem) throw new StackFileError('bad_file', `This stack file is refused: its computer's record of /workspace ("${JOURNAL_PATH}") is not one the computer writes: ${problem}.`);
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
  private size = 0;

  private constructor(
    readonly entry: ManifestEntry,
    private readonly hasher: IHasher,
    private readonly sink: FileSink | null,
    private readonly kept: Uint8Array[] | null,
  ) {}

  /** Into `target` at the entry's path under `stack/` (or under `image/` when `target` is an image's folder). */
  static async open(target: FileSystemDirectoryHandle, entry: ManifestEntry, hasher: IHasher): Promise<EntryWriter> {
    hasher.init();
    if (entry.path === LAYOUT_NAME) return new EntryWriter(entry, hasher, null, []);
    const parts = entry.path.slice(entry.path.startsWith(IMAGE_PREFIX) ? IMAGE_PREFIX.length : STACK_PREFIX.length).split('/');
    let dir = target;
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
    const handle = await dir.getFileHandle(parts.at(-1)!, { create: true });
    return new EntryWriter(entry, hasher, await openFileSink(handle), null);
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.hasher.update(chunk);
    this.size += chunk.byteLength;
    if (this.kept) this.kept.push(chunk.slice());
    else await this.sink!.write(chunk);
  }

  /** Checks size and checksum; the file is let go of whole only when both match (else the caller removes it). */
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
    await this.sink!.close();
    return null;
  }

  async abort(): Promise<void> {
    await this.sink?.abort();
  }
}
