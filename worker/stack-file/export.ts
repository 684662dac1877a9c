// Writes a still stack (closed by its tab, its databases copied with VACUUM INTO) as one `.stack`
// file, streamed: the manifest first (every entry's path and size), then the layout and the
// stack's files, each packed with zstd (zstd-codec.ts) into zip.js's writer as it is read, and
// last every entry's sha256 (`checksums.json`). Each file is read once.
import { Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import { createCRC32, createSHA256 } from 'hash-wasm';
import { loadZstd, type ZstdModule } from '../zstd.ts';
import { sha256Hex } from '../../vm/image.ts';
import { imageSources, type ImageGathering } from './image-entries.ts';
import { FRAME_BYTES, registerZstd, ZSTD_METHOD } from './zstd-codec.ts';
import { CANVAS_PATH, inTemplate, MCP_PATH, templateCanvas, templateMcp } from './template.ts';
import { CHECKSUMS_NAME, FORMAT, FORMAT_VERSION, LAYOUT_NAME, MANIFEST_NAME, NEVER_EXPORTED, SNAPSHOT_DIR, STACK_PREFIX, StackFileError, type StackManifest } from './format.ts';
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
  /** Bytes of the stack's files packed, of all of them. */
  onProgress?(done: number, total: number): void;
  /**
   * A template (template.ts) instead of the whole stack: its makings only, read from the stack as
   * it is (it need not be still: no database, no computer).
   */
  template?: { description: string };
  /**
   * Carries the system image the stack's computer runs on (image-entries.ts): where the app's own
   * is served and `root`, the OPFS root (`base/`, `images/`). Not for a template.
   */
  includeImage?: Omit<ImageGathering, 'stack' | 'recipe'>;
}

/** One entry of the file: a stack file read from OPFS, or a few bytes made here. */
export type Source =
  | { path: string; file: File; store?: boolean }
  | { path: string; bytes: Uint8Array; store?: boolean }
  /** Made as it is read (the system image's chunks, gathered from this browser or its server). */
  | { path: string; size: number; stream: () => AsyncIterable<Uint8Array>; store?: boolean };

type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };
const READ_CHUNK = 4 << 20;
/** Bytes written to the file at a time. */
const WRITE_BATCH = 4 << 20;
/** Bytes of the file handed to the browser and not yet written, at most (then the packing waits). */
const WRITE_AHEAD = 16 << 20;

/** Returns the manifest written. Throws StackFileError (`cancelled` when `signal` aborts). */
export async function exportStack(options: ExportOptions): Promise<StackManifest & { bytes: number }> {
  const { signal } = options;
  const recipe = options.template ? null : await imageRecipe(options.stack);
  const image = options.includeImage && recipe ? await imageSources({ ...options.includeImage, stack: options.stack, recipe }) : [];
  const sources = [...(await collect(options)), ...image];
  const total = sources.reduce((sum, source) => sum + sizeOf(source), 0);
  let done = 0;
  const progress = (bytes: number) => {
    done += bytes;
    options.onProgress?.(done, total);
  };
  // Sizes are known now, checksums once each entry is written: they go last (`checksums.json`),
  // and each file is read once.
  const manifest: StackManifest = {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    app_version: options.appVersion,
    created_at: Date.now(),
    stack: { name: options.name },
    image: { recipe },
    includes_image: image.length > 0,
    ...(options.template ? { template: options.template } : {}),
    entries: sources.map((source) => ({ path: source.path, size: sizeOf(source) })),
  };

  const zstd = await loadZstd();
  await registerZstd();
  const writer = options.out.getWriter();
  let written = 0;
  // The zip writer's pieces are gathered into batches of a few MiB (one browser write each), and
  // handed on without waiting for each to land: the browser writes while the next frames are
  // packed. A failed write (a full disk) surfaces at the next one or at the end.
  let failed: unknown = null;
  let inFlight = 0;
  let landed: (() => void) | null = null;
  let batch = new Uint8Array(WRITE_BATCH);
  let batched = 0;
  const send = async () => {
    while (inFlight > WRITE_AHEAD && !failed) await new Promise<void>((resolve) => (landed = resolve));
    if (failed) throw failed;
    const bytes = batch.subarray(0, batched);
    batch = new Uint8Array(WRITE_BATCH);
    batched = 0;
    inFlight += bytes.byteLength;
    writer.write(bytes).then(
      () => {
        inFlight -= bytes.byteLength;
        landed?.();
      },
      (error: unknown) => {
        failed ??= error;
        landed?.();
      },
    );
  };
  const counted = new WritableStream<Uint8Array>({
    async write(chunk) {
      // Copied into the batch: the zip writer may use its buffer again once this call returns.
      for (let at = 0; at < chunk.byteLength; ) {
        const part = chunk.subarray(at, at + WRITE_BATCH - batched);
        batch.set(part, batched);
        batched += part.byteLength;
        at += part.byteLength;
        if (batched === WRITE_BATCH) await send();
      }
      written += chunk.byteLength;
    },
    async close() {
      if (batched) await send();
    },
  });
  const json = (value: unknown) => new Uint8ArrayReader(new TextEncoder().encode(JSON.stringify(value, null, 1)));
  try {
    const zip = new ZipWriter(counted, { keepOrder: true, useWebWorkers: false, signal });
    // The manifest is stored as it is: an app of an earlier format reads it and names the version.
    await zip.add(MANIFEST_NAME, json(manifest), { level: 0 });
    const sha256: Record<string, string> = {};
    // The next file is read while this one is packed and written (the browser reads on its own thread).
    let next = readWhole(sources[0]);
    for (const [at, source] of sources.entries()) {
      checkCancelled(signal);
      const bytes = await next;
      next = readWhole(sources[at + 1]);
      sha256[source.path] = await addEntry(zip, source, bytes, zstd, signal, progress);
    }
    await next;
    await zip.add(CHECKSUMS_NAME, json({ sha256 }), { level: 0 });
    await zip.close();
    await writer.close();
    if (failed) throw failed;
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
  return 'file' in source ? source.file.size : 'bytes' in source ? source.bytes.byteLength : source.size;
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

async function* chunksOf(source: Source, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  if ('stream' in source) {
    let size = 0;
    for await (const chunk of source.stream()) {
      checkCancelled(signal);
      size += chunk.byteLength;
      yield chunk;
    }
    if (size !== source.size) throw new StackFileError('damaged', `"${source.path}" came to ${size} bytes, not the ${source.size} expected.`);
    return;
  }
  if ('bytes' in source) {
    yield source.bytes;
    return;
  }
  // Read in large slices: OPFS files are read fastest that way, and zstd packs a MiB a frame.
  for (let at = 0; at < source.file.size; at += READ_CHUNK) {
    checkCancelled(signal);
    yield new Uint8Array(await source.file.slice(at, at + READ_CHUNK).arrayBuffer());
  }
}

/** The source as a stream for the zip writer, counting what it reads into the progress. */
function readableOf(source: Source, signal: AbortSignal, progress: (bytes: number) => void): ReadableStream<Uint8Array> {
  const chunks = chunksOf(source, signal);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      if (done) return controller.close();
      progress(value.byteLength);
      controller.enqueue(value);
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

/**
 * Files up to this size are read whole: hashed by the browser's own SHA-256 (several times faster,
 * and beside the packing, on another thread) and packed from memory.
 */
const WHOLE_READ = 64 * 2 ** 20;

/** A file read whole (up to WHOLE_READ), or null: streamed instead. A failed read fails at its turn. */
function readWhole(source: Source | undefined): Promise<Uint8Array | null> {
  if (!source || 'stream' in source || sizeOf(source) > WHOLE_READ) return Promise.resolve(null);
  if ('bytes' in source) return Promise.resolve(source.bytes);
  const reading = source.file.arrayBuffer().then((buffer) => new Uint8Array(buffer));
  reading.catch(() => {}); // awaited in turn
  return reading;
}

/** Packs one file into the zip as zstd frames (`bytes`: the whole file, when read whole); returns its sha256 (hex). */
async function addEntry(zip: ZipWriter<unknown>, source: Source, bytes: Uint8Array | null, zstd: ZstdModule, signal: AbortSignal, progress: (bytes: number) => void): Promise<string> {
  const size = sizeOf(source);
  if (bytes) {
    const digest = sha256Hex(bytes); // on the browser's own thread, beside the packing
    const crc = await createCRC32();
    crc.init();
    crc.update(bytes);
    if (source.store) {
      // Packed already (the image's gzip chunks and zstd states): stored as it is.
      progress(size);
      await zip.add(source.path, new Uint8ArrayReader(bytes), { level: 0 });
      return digest;
    }
    let at = 0;
    const frames = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (at >= size) return controller.close();
          const frame = bytes.subarray(at, at + FRAME_BYTES);
          at += frame.byteLength;
          controller.enqueue(zstd.compress(frame, 1));
          progress(frame.byteLength);
        },
      },
      { highWaterMark: 4 }, // packs a few frames ahead of their writing
    );
    await zip.add(source.path, frames, { passThrough: true, compressionMethod: ZSTD_METHOD, uncompressedSize: size, crc32: parseInt(crc.digest('hex'), 16) });
    return digest;
  }
  // A large file streams through, hashed as it goes; the zip writer takes its CRC-32 itself.
  const hasher = await createSHA256();
  hasher.init();
  const hashed = readableOf(source, signal, progress).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hasher.update(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  await zip.add(source.path, hashed, source.store ? { level: 0, uncompressedSize: size } : { compressionMethod: ZSTD_METHOD, uncompressedSize: size });
  return hasher.digest('hex');
}
