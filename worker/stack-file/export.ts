// Writes a still stack (closed by its tab, its databases copied with VACUUM INTO) as one `.stack`
// file, streamed: the manifest first (every entry's path and size), then the layout and the
// stack's files, each packed with zstd (zstd-codec.ts) into zip.js's writer, and last every
// entry's sha256 (`checksums.json`). A file is packed in memory as it is read, a large one half
// here and half on a second thread (pack-worker.ts); one larger than WHOLE_READ streams through.
// While the tab closes the stack, the files the closing leaves alone are packed already.
import { Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import * as Comlink from 'comlink';
import { createSHA256 } from 'hash-wasm';
import { loadZstd, type ZstdModule } from '../zstd.ts';
import { sha256Hex } from '../../storage/hash.ts';
import { imageSources, type ImageGathering } from './image-entries.ts';
import type { Source } from './source.ts';
import { FRAME_BYTES, packFrames, registerZstd, ZSTD_METHOD } from './zstd-codec.ts';
import { CANVAS_PATH, inTemplate, MCP_PATH, templateCanvas, templateMcp } from './template.ts';
import { carriedMcp, leftBehind } from './export-plan.ts';
import { CHECKSUMS_NAME, FORMAT, FORMAT_VERSION, LAYOUT_NAME, MANIFEST_NAME, SNAPSHOT_DIR, STACK_PREFIX, StackFileError, type StackManifest } from './format.ts';
import { isPartialWrite } from '../../storage/atomic-write.ts';
import { readJsonAt } from '../../storage/json-files.ts';
import { STACK_PATHS } from '../../storage/layout.ts';
import { fileAt } from '../../storage/opfs.ts';
import { listFiles } from '../../storage/walk.ts';
import { crc32Combine, crc32Of } from './crc32-combine.ts';
import type { PackApi, PackedPart } from './pack-worker.ts';

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
  /**
   * Resolves once the stack is still (its tab is closing it for the export: saving its computer,
   * copying its databases). Given, the files the closing does not write are read and packed
   * meanwhile (`prepack`); each is used only if it is unchanged once the stack is still.
   */
  whenStill?: () => Promise<void>;
  /**
   * MCP servers' header and env values to carry (ids from export-plan.ts `exportContents`); every
   * other one is left out, marked as a value to fill in. A template carries none.
   */
  includeSecrets?: readonly string[];
}

const READ_CHUNK = 4 << 20;
/** Bytes written to the file at a time. */
const WRITE_BATCH = 4 << 20;
/** Bytes of the file handed to the browser and not yet written, at most (then the packing waits). */
const WRITE_AHEAD = 48 << 20;

/**
 * Returns the manifest written, the file's size and how many files were packed while the stack
 * closed (`prepacked`). Throws StackFileError (`cancelled` when `signal` aborts).
 */
export async function exportStack(options: ExportOptions): Promise<StackManifest & { bytes: number; prepacked: number }> {
  const zstd = await loadZstd();
  const packer = secondPacker();
  try {
    return await exportWith(options, zstd, packer);
  } finally {
    packer.close();
  }
}

async function exportWith(options: ExportOptions, zstd: ZstdModule, packer: Packer): Promise<StackManifest & { bytes: number; prepacked: number }> {
  const { signal } = options;
  let prepacked: Map<string, Packed>, recipe: string | null, image: Source[], sources: Source[];
  try {
    prepacked = options.whenStill && !options.template ? await prepack(options.stack, options.whenStill, zstd, signal) : new Map();
    recipe = options.template ? null : await imageRecipe(options.stack);
    image = options.includeImage && recipe ? await imageSources({ ...options.includeImage, stack: options.stack, recipe }) : [];
    sources = [...(await collect(options)), ...image];
  } catch (error) {
    // Nothing written yet (a failed close, a missing copy): the file is dropped.
    await options.out.abort(error).catch(() => {});
    throw error;
  }
  // Files packed while the stack was being closed, and unchanged since, go first: they are only
  // written, while the first of the others is read.
  const packedOf = new Map<Source, Packed>();
  for (const source of sources) {
    if (!('file' in source)) continue;
    const packed = prepacked.get(source.path);
    if (packed && packed.size === source.file.size && packed.lastModified === source.file.lastModified) packedOf.set(source, packed);
  }
  sources.sort((a, b) => Number(packedOf.has(b)) - Number(packedOf.has(a)));
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
    // Files are packed ahead of their writing, up to PACK_AHEAD bytes of them at a time.
    const waiting = sources.filter((source) => !packedOf.has(source));
    const packing = new Map<Source, Promise<Packed | null>>();
    let ahead = 0;
    const packMore = () => {
      for (let source = waiting[0]; source && (packing.size === 0 || ahead + sizeOf(source) <= PACK_AHEAD); source = waiting[0]) {
        waiting.shift();
        const made = packInMemory(source, zstd, packer, signal);
        packing.set(source, made);
        ahead += sizeOf(source);
      }
    };
    packMore();
    for (const source of sources) {
      checkCancelled(signal);
      let packed = packedOf.get(source) ?? null;
      if (!packed) {
        packed = await packing.get(source)!;
        packing.delete(source);
        ahead -= sizeOf(source);
        packMore();
      }
      sha256[source.path] = packed ? await addPacked(zip, source.path, packed, progress) : await addEntry(zip, source, signal, progress);
    }
    await zip.add(CHECKSUMS_NAME, json({ sha256 }), { level: 0 });
    await zip.close();
    await writer.close();
    if (failed) throw failed;
  } catch (error) {
    await writer.abort(error).catch(() => {});
    if (signal.aborted) throw new StackFileError('cancelled', 'The export was cancelled.');
    throw error;
  }
  return { ...manifest, bytes: written, prepacked: packedOf.size };
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
    for (const [path, file] of await walk(options.stack, inTemplate)) {
      const rewrite = path === CANVAS_PATH ? templateCanvas : path === MCP_PATH ? templateMcp : null;
      sources.push(rewrite ? { path: STACK_PREFIX + path, bytes: new TextEncoder().encode(rewrite(await file.text())) } : { path: STACK_PREFIX + path, file });
    }
    return sources;
  }
  const machine = await readMachine(options.stack);
  // A saved state counts only beside the disk it was saved with (vm/README, the generation rule).
  const stateCounts = machine !== null && typeof machine.state === 'string' && machine.state === machine.disk;
  // A computer whose first start never finished names no image: its files lie over nothing the
  // file could name, and an importer refuses them beside `image: null`. It starts afresh there.
  const computerCounts = (await imageRecipe(options.stack)) !== null;
  for (const [path, file] of await walk(options.stack)) {
    if (leftBehind(path)) continue;
    if (path.startsWith('.os/vm/') && !computerCounts) continue;
    if (path === '.os/vm/state.bin' && !stateCounts) continue;
    if (path === MCP_PATH) {
      sources.push({ path: STACK_PREFIX + path, bytes: new TextEncoder().encode(carriedMcp(await file.text(), options.includeSecrets)) });
      continue;
    }
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

/** The files under `dir` by path, each folder in name order, without partial writes; `keep` says which files count. */
async function walk(dir: FileSystemDirectoryHandle, keep: (path: string) => boolean = () => true): Promise<[string, File][]> {
  const found = await listFiles(dir, { sorted: true, skip: (path, kind) => kind === 'file' && (!keep(path) || isPartialWrite(path.slice(path.lastIndexOf('/') + 1))) });
  const files: [string, File][] = [];
  for (const { path, handle } of found) files.push([path, await handle.getFile()]);
  return files;
}

interface MachineMeta {
  imageHash?: string | null;
  state?: string | null;
  disk?: string | null;
}

async function readMachine(stack: FileSystemDirectoryHandle): Promise<MachineMeta | null> {
  return (await readJsonAt(stack, `${STACK_PATHS.vm}/machine.json`)) as MachineMeta | null;
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
 * Files up to this size are packed in memory, their checksums worked out beside the packing (the
 * browser's own SHA-256 is several times faster than one in wasm); larger ones stream through.
 */
const WHOLE_READ = 64 * 2 ** 20;

/** A file packed in memory: its zstd frames, and its checksums. */
interface Packed {
  size: number;
  /** The file's, when it was read: packed before the stack was still, it counts only if unchanged. */
  lastModified: number;
  frames: Uint8Array[];
  crc32: number;
  sha256: string;
}

/** Files from this size on are packed half here, half on the second packer. */
const SPLIT_FROM = 4 << 20;

interface Packer {
  /** The file packed from `from` on, and its whole SHA-256. */
  packFrom(file: File, from: number): Promise<PackedPart>;
  close(): void;
}

/** The second packer (pack-worker.ts), started on first use. */
function secondPacker(): Packer {
  let worker: Worker | null = null;
  let api: Comlink.Remote<PackApi> | null = null;
  let broken: Promise<never> | null = null;
  return {
    packFrom(file, from) {
      if (!worker) {
        const started = new Worker(new URL('./pack-worker.ts', import.meta.url), { type: 'module', name: 'stack-file packer' });
        worker = started;
        api = Comlink.wrap<PackApi>(started);
        broken = new Promise<never>((_, reject) => started.addEventListener('error', (event) => reject(new Error(`the second packer stopped: ${event.message || 'it did not load'}`))));
        broken.catch(() => {});
      }
      return Promise.race([api!.packFrom(file, from), broken!]);
    },
    close() {
      worker?.terminate();
    },
  };
}

/**
 * Packs a file (up to WHOLE_READ) or a few bytes into zstd frames in memory; null for what streams
 * through instead (addEntry). A failed read fails at its turn.
 */
function packInMemory(source: Source | undefined, zstd: ZstdModule, packer: Packer, signal: AbortSignal): Promise<Packed | null> {
  if (!source || 'stream' in source || source.store || sizeOf(source) > WHOLE_READ) return Promise.resolve(null);
  const packing = 'bytes' in source ? packBytes(source.bytes, 0, zstd) : packFile(source.file, zstd, packer, signal);
  packing.catch(() => {}); // awaited in turn
  return packing;
}

async function packBytes(bytes: Uint8Array, lastModified: number, zstd: ZstdModule): Promise<Packed> {
  const digest = sha256Hex(bytes); // on the browser's own thread, beside the packing
  digest.catch(() => {});
  const crc32 = await crc32Of(bytes);
  return { size: bytes.byteLength, lastModified, frames: packFrames(zstd, bytes), crc32, sha256: await digest };
}

/** A file; a large one half here, the rest (and the whole file's SHA-256) on the second packer, if given. */
async function packFile(file: File, zstd: ZstdModule, packer: Packer | null, signal: AbortSignal): Promise<Packed> {
  if (file.size < SPLIT_FROM || !packer) return packBytes(new Uint8Array(await file.arrayBuffer()), file.lastModified, zstd);
  const half = Math.ceil(file.size / 2 / FRAME_BYTES) * FRAME_BYTES;
  const rest = packer.packFrom(file, half);
  rest.catch(() => {});
  const bytes = new Uint8Array(await file.slice(0, half).arrayBuffer());
  checkCancelled(signal);
  const crc32 = await crc32Of(bytes);
  const frames = packFrames(zstd, bytes);
  const second = await rest;
  return { size: file.size, lastModified: file.lastModified, frames: [...frames, ...second.frames], crc32: crc32Combine(crc32, second.crc32, file.size - half), sha256: second.sha256 };
}

/** Bytes of files being packed ahead of their writing, at most (one larger file alone). */
const PACK_AHEAD = 128 * 2 ** 20;

/** Packed output held in memory while the stack closes, at most. */
const PREPACK_BYTES = 96 * 2 ** 20;

/**
 * Packs the stack's files that closing it does not write (all but the computer's and the
 * database copies) and that travel as they are (not the MCP servers, whose secrets are left out), until `whenStill` resolves or PREPACK_BYTES are held. A file that cannot be
 * read now (written to meanwhile, or held open) is left for its turn; a failed close is thrown.
 */
async function prepack(stack: FileSystemDirectoryHandle, whenStill: () => Promise<void>, zstd: ZstdModule, signal: AbortSignal): Promise<Map<string, Packed>> {
  const closing = whenStill();
  let settled = false;
  closing.then(
    () => (settled = true),
    () => (settled = true), // thrown below
  );
  const packed = new Map<string, Packed>();
  const keep = (path: string) => !path.startsWith('.os/vm/') && path !== MCP_PATH && !leftBehind(path);
  let held = 0;
  try {
    for (const [path, file] of await walk(stack, keep)) {
      if (settled || signal.aborted || held >= PREPACK_BYTES) break;
      if (file.size > WHOLE_READ) continue;
      // On this thread alone: the tab's closing (its computer being saved) has the other core.
      const made = await packFile(file, zstd, null, signal);
      held += made.frames.reduce((sum, frame) => sum + frame.byteLength, 0);
      packed.set(STACK_PREFIX + path, made);
    }
  } catch {
    // Read at its turn instead, once the stack is still.
  }
  await closing;
  return packed;
}

/** Writes a file packed beforehand; returns its sha256 (hex). */
async function addPacked(zip: ZipWriter<unknown>, path: string, packed: Packed, progress: (bytes: number) => void): Promise<string> {
  let at = 0;
  const frames = new ReadableStream<Uint8Array>({
    pull(controller) {
      const frame = packed.frames[at++];
      if (!frame) return controller.close();
      controller.enqueue(frame);
      progress(Math.min(FRAME_BYTES, packed.size - (at - 1) * FRAME_BYTES));
    },
  });
  await zip.add(path, frames, { passThrough: true, compressionMethod: ZSTD_METHOD, uncompressedSize: packed.size, crc32: packed.crc32 });
  return packed.sha256;
}

/**
 * Adds what is not packed in memory: a file larger than WHOLE_READ or made as it is read, streamed
 * through and hashed as it goes (the zip writer takes its CRC-32 itself), or one packed already
 * (the image's gzip chunks and zstd states), stored as it is. Returns its sha256 (hex).
 */
async function addEntry(zip: ZipWriter<unknown>, source: Source, signal: AbortSignal, progress: (bytes: number) => void): Promise<string> {
  const size = sizeOf(source);
  if (source.store && 'file' in source && size <= WHOLE_READ) {
    const bytes = new Uint8Array(await source.file.arrayBuffer());
    const digest = sha256Hex(bytes);
    progress(size);
    await zip.add(source.path, new Uint8ArrayReader(bytes), { level: 0 });
    return digest;
  }
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
