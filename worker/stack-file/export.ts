// Writes a still stack (closed by its tab, its databases copied with VACUUM INTO) as one `.stack`
// file, streamed: the manifest first (every entry's size and sha256, measured in a first pass),
// then the layout and the stack's files, each deflated by fflate's streaming Zip.
import { deflateSync, Zip, ZipDeflate, ZipPassThrough } from 'fflate';
import { createSHA256 } from 'hash-wasm';
import { CANVAS_PATH, inTemplate, MCP_PATH, templateCanvas, templateMcp } from './template.ts';
import { FORMAT, FORMAT_VERSION, LAYOUT_NAME, MANIFEST_NAME, NEVER_EXPORTED, SNAPSHOT_DIR, STACK_PREFIX, StackFileError, type ManifestEntry, type StackManifest } from './format.ts';
import { isPartialWrite } from '../../vm/opfs-write.ts';

export interface ExportOptions {
  /** The stack's folder, `stacks/<id>/`: still, with `.os/snapshot/` made by its worker's `close`. */
  stack: FileSystemDirectoryHandle;
  name: string;
  appVersion: string;
  /** The page's canvas layout of the stack (JSON), or null. */
  layout: string | null;
  /** Where the file goes; closed when complete, aborted on failure. */
  out: WritableStream<Uint8Array>;
  signal: AbortSignal;
  /** Bytes done of the total (each file is read twice: measured, then written). */
  onProgress?(done: number, total: number): void;
  /**
   * A template (template.ts) instead of the whole stack: its makings only, read from the stack as
   * it is (it need not be still: no database, no computer).
   */
  template?: { description: string };
}

/** One entry of the file: a stack file read from OPFS, or a few bytes made here. */
type Source = { path: string; file: File } | { path: string; bytes: Uint8Array };

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };
const READ_CHUNK = 1 << 20;

/** Returns the manifest written. Throws StackFileError (`cancelled` when `signal` aborts). */
export async function exportStack(options: ExportOptions): Promise<StackManifest & { bytes: number }> {
  const { signal } = options;
  const sources = await collect(options);
  const total = sources.reduce((sum, source) => sum + sizeOf(source), 0) * 2;
  let done = 0;
  const progress = (bytes: number) => {
    done += bytes;
    options.onProgress?.(done, total);
  };

  const entries: ManifestEntry[] = [];
  for (const source of sources) {
    checkCancelled(signal);
    entries.push({ path: source.path, size: sizeOf(source), sha256: await hashSource(source, signal, progress) });
  }
  const manifest: StackManifest = {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    app_version: options.appVersion,
    created_at: Date.now(),
    stack: { name: options.name },
    image: { recipe: options.template ? null : await imageRecipe(options.stack) },
    includes_image: false,
    ...(options.template ? { template: options.template } : {}),
    entries,
  };

  const writer = options.out.getWriter();
  let written = 0;
  try {
    const zip = createZipSink(writer, (bytes) => (written += bytes));
    await zip.add(MANIFEST_NAME, [new TextEncoder().encode(JSON.stringify(manifest, null, 1))]);
    for (const source of sources) {
      checkCancelled(signal);
      await zip.add(source.path, chunksOf(source, signal), progress, await worthDeflating(source));
    }
    await zip.end();
    await writer.close();
  } catch (error) {
    await writer.abort(error).catch(() => {});
    if (signal.aborted) throw new StackFileError('cancelled', 'The export was cancelled.');
    throw error;
  }
  return { ...manifest, bytes: written };
}

function checkCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new StackFileError('cancelled', 'The export was cancelled.');
}

function sizeOf(source: Source): number {
  return 'file' in source ? source.file.size : source.bytes.byteLength;
}

/** Every file of the stack that travels, in a stable order, with the databases' copies in their place. */
async function collect(options: ExportOptions): Promise<Source[]> {
  const sources: Source[] = [];
  if (options.layout !== null) sources.push({ path: LAYOUT_NAME, bytes: new TextEncoder().encode(options.layout) });
  if (options.template) {
    // Only the kept files are opened: the open stack's databases and disk are held by its workers.
    for (const [path, file] of await walk(options.stack, '', inTemplate)) {
      const rewrite = path === CANVAS_PATH ? templateCanvas : path === MCP_PATH ? templateMcp : null;
      sources.push(rewrite ? { path: STACK_PREFIX + path, bytes: new TextEncoder().encode(rewrite(await file.text())) } : { path: STACK_PREFIX + path, file });
    }
    return sources;
  }
  const machine = await readMachine(options.stack);
  // A saved state counts only beside the disk it was saved with (vm/README, the generation rule).
  const stateCounts = machine !== null && typeof machine.state === 'string' && machine.state === machine.disk;
  for (const [path, file] of await walk(options.stack, '')) {
    if (NEVER_EXPORTED.some((rule) => rule.test(path))) continue;
    if (path === '.os/vm/state.bin' && !stateCounts) continue;
    if (path === '.os/vm/machine.json' && machine !== null && !stateCounts) {
      sources.push({ path: STACK_PREFIX + path, bytes: new TextEncoder().encode(JSON.stringify({ ...machine, state: null })) });
      continue;
    }
    sources.push({ path: STACK_PREFIX + path, file });
  }
  for (const db of ['transcript', 'memory'] as const) {
    const copy = await fileAt(options.stack, `${SNAPSHOT_DIR}/${db}.db`);
    if (!copy) throw new StackFileError('damaged', `The stack's ${db}.db was not copied for the export; try again.`);
    sources.push({ path: `${STACK_PREFIX}.os/memory/${db}.db`, file: copy });
  }
  return sources;
}

async function walk(dir: FileSystemDirectoryHandle, prefix: string, keep: (path: string) => boolean = () => true): Promise<[string, File][]> {
  const found: [string, File][] = [];
  const children: [string, FileSystemHandle][] = [];
  for await (const entry of (dir as unknown as Entries).entries()) children.push(entry);
  children.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, handle] of children) {
    const path = prefix ? `${prefix}/${name}` : name;
    if (handle.kind === 'directory') found.push(...(await walk(handle as FileSystemDirectoryHandle, path, keep)));
    else if (keep(path) && !isPartialWrite(name)) found.push([path, await (handle as FileSystemFileHandle).getFile()]);
  }
  return found;
}

async function fileAt(root: FileSystemDirectoryHandle, path: string): Promise<File | null> {
  const parts = path.split('/');
  try {
    let dir = root;
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
    return await (await dir.getFileHandle(parts.at(-1)!)).getFile();
  } catch {
    return null;
  }
}

interface MachineMeta {
  imageHash?: string | null;
  state?: string | null;
  disk?: string | null;
}

async function readMachine(stack: FileSystemDirectoryHandle): Promise<MachineMeta | null> {
  const file = await fileAt(stack, '.os/vm/machine.json');
  if (!file) return null;
  try {
    return JSON.parse(await file.text()) as MachineMeta;
  } catch {
    return null;
  }
}

/** The image the stack's disk overlay lies over: only a complete fill records it. */
async function imageRecipe(stack: FileSystemDirectoryHandle): Promise<string | null> {
  const hash = (await readMachine(stack))?.imageHash;
  return typeof hash === 'string' && /^[0-9a-f]{8,64}$/.test(hash) ? hash : null;
}

const SAMPLE = 64 * 1024;

/**
 * Whether deflating a file pays: samples across it (start, middle, end) deflated, and the file
 * is stored as it is when they barely shrink (PDFs, photos, random data). Deflating what does
 * not shrink costs most of an export's time and most of an import's.
 */
async function worthDeflating(source: Source): Promise<boolean> {
  const size = sizeOf(source);
  if (size <= SAMPLE * 4) return true;
  let sampled = 0;
  let packed = 0;
  for (const at of [0, Math.floor(size / 3), Math.floor((size * 2) / 3), size - SAMPLE]) {
    const slice = 'file' in source ? new Uint8Array(await source.file.slice(at, at + SAMPLE).arrayBuffer()) : source.bytes.subarray(at, at + SAMPLE);
    sampled += slice.byteLength;
    packed += deflateSync(slice, { level: 1 }).byteLength;
  }
  return packed < sampled * 0.9;
}

async function* chunksOf(source: Source, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  if ('bytes' in source) {
    yield source.bytes;
    return;
  }
  // Read in large slices: OPFS files are read fastest that way, and deflate works on whole runs.
  for (let at = 0; at < source.file.size; at += READ_CHUNK) {
    checkCancelled(signal);
    yield new Uint8Array(await source.file.slice(at, at + READ_CHUNK).arrayBuffer());
  }
}

async function hashSource(source: Source, signal: AbortSignal, progress: (bytes: number) => void): Promise<string> {
  const hasher = await createSHA256();
  hasher.init();
  for await (const chunk of chunksOf(source, signal)) {
    hasher.update(chunk);
    progress(chunk.byteLength);
  }
  return hasher.digest('hex');
}

/**
 * fflate's Zip, whose output is pushed synchronously, in front of an async writer: after each
 * chunk the queued output is written before more is read, so memory holds about one chunk.
 */
function createZipSink(writer: WritableStreamDefaultWriter<Uint8Array>, onWritten: (bytes: number) => void) {
  let queue: Uint8Array[] = [];
  let failure: unknown = null;
  const zip = new Zip((error, data, final) => {
    if (error) failure = error;
    else if (data.byteLength) queue.push(data);
    void final;
  });
  async function drain(): Promise<void> {
    if (failure) throw failure;
    if (queue.length === 0) return;
    const parts = queue;
    queue = [];
    const size = parts.reduce((sum, part) => sum + part.byteLength, 0);
    const joined = parts.length === 1 ? parts[0]! : new Uint8Array(size);
    if (parts.length > 1) {
      let at = 0;
      for (const part of parts) {
        joined.set(part, at);
        at += part.byteLength;
      }
    }
    await writer.write(joined);
    onWritten(size);
  }
  return {
    async add(name: string, chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, progress?: (bytes: number) => void, deflate = true) {
      const entry = deflate ? new ZipDeflate(name, { level: 1 }) : new ZipPassThrough(name);
      zip.add(entry);
      let pending: Uint8Array | null = null;
      // One chunk behind, so the last one is pushed with `final`.
      for await (const chunk of chunks) {
        if (pending) {
          entry.push(pending, false);
          progress?.(pending.byteLength);
          await drain();
        }
        pending = chunk;
      }
      entry.push(pending ?? new Uint8Array(0), true);
      if (pending) progress?.(pending.byteLength);
      await drain();
    },
    async end() {
      zip.end();
      await drain();
    },
  };
}
