// The built machine image (vm-images/README.md, "Outputs"): manifest validation, and filling a
// disk file from its gzip chunks and fetching kernel/initrd/BIOS and saved states, each checked by
// sha256.
import { Gunzip } from 'fflate';
import { Decompress as Unzstd } from 'fzstd';
import { concatBytes } from './bytes.ts';
import { writeFully, type SyncFile } from './disk.ts';
import { sha256Hex } from '../storage/hash.ts';

export interface ImageFile {
  file: string;
  size: number;
  sha256: string;
}

export interface DiskChunk {
  index: number;
  sha256: string;
  file: string;
  compressedSize: number;
  /** sha256 of the gzip file as served: a download is checked without inflating it. */
  gzipSha256?: string;
}

export interface ImageManifest {
  format: 1;
  recipeHash: string;
  cmdline: string;
  memoryMiB: number;
  agent: { protocol: number; virtioConsolePort: number; guestDevice: string };
  files: { kernel: ImageFile; initrd: ImageFile; bios: ImageFile; vgaBios: ImageFile };
  /**
   * `wakeSet`: the chunks (by index) that waking the pristine state and a first command read,
   * recorded by the image build; fetched before the first start, the rest on demand and in the
   * background.
   */
  disk: { size: number; chunkSize: number; compression: 'gzip'; chunks: DiskChunk[]; wakeSet?: number[] };
  /**
   * The post-boot saved state that matches the disk as shipped (zstd, or gzip in images built
   * before it; sha256 of the raw bytes).
   */
  pristineState?: ImageFile & {
    compressedSize: number;
    /** What its guest holds of the /workspace share (its mount): kept beside it as its journal. */
    workspace?: { msize: number; fids: [number, string][] };
  };
  /**
   * The kernel started and held before it mounts the disk (packed as pristineState): a cold boot
   * restores it onto the disk as it is (vm/machine.ts, captureBootState).
   */
  bootState?: ImageFile & {
    compressedSize: number;
    /** The sha256 of the file as shipped (zstd): a download that only keeps it checks this, unpacking nothing. */
    packedSha256?: string;
  };
}

export type ImageErrorCode = 'bad_manifest' | 'fetch_failed' | 'checksum' | 'quota' | 'write_failed';

export class ImageError extends Error {
  override readonly name = 'ImageError';
  constructor(readonly code: ImageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export type FetchLike = (url: string) => Promise<Response>;

const HEX64 = /^[0-9a-f]{64}$/;

/** Checks a parsed manifest.json; throws ImageError('bad_manifest') naming the first problem. */
export function parseManifest(value: unknown): ImageManifest {
  const fail = (what: string): never => {
    throw new ImageError('bad_manifest', `the machine image's manifest is invalid: ${what}`);
  };
  if (!value || typeof value !== 'object') fail('not an object');
  const m = value as Record<string, unknown>;
  if (m.format !== 1) fail(`format ${String(m.format)} is not 1`);
  if (typeof m.recipeHash !== 'string' || !m.recipeHash) fail('recipeHash missing');
  if (typeof m.cmdline !== 'string') fail('cmdline missing');
  if (typeof m.memoryMiB !== 'number' || m.memoryMiB <= 0) fail('memoryMiB missing');
  const agent = m.agent as ImageManifest['agent'] | undefined;
  if (!agent || agent.protocol !== 1) fail('agent protocol is not 1');
  const files = m.files as Record<string, unknown> | undefined;
  for (const role of ['kernel', 'initrd', 'bios', 'vgaBios']) {
    const f = files?.[role] as ImageFile | undefined;
    if (!f || typeof f.file !== 'string' || typeof f.size !== 'number' || !HEX64.test(f.sha256 ?? '')) fail(`files.${role} is incomplete`);
  }
  const disk = m.disk as ImageManifest['disk'] | undefined;
  if (!disk || typeof disk.size !== 'number' || typeof disk.chunkSize !== 'number' || disk.chunkSize <= 0) fail('disk size missing');
  if (disk!.compression !== 'gzip') fail(`disk compression ${String(disk!.compression)} is not gzip`);
  if (!Array.isArray(disk!.chunks)) fail('disk.chunks missing');
  const count = Math.ceil(disk!.size / disk!.chunkSize);
  let last = -1;
  for (const c of disk!.chunks) {
    if (!Number.isInteger(c.index) || c.index <= last || c.index >= count) fail(`chunk index ${String(c.index)} out of order or range`);
    if (!HEX64.test(c.sha256) || typeof c.file !== 'string') fail(`chunk ${c.index} is incomplete`);
    last = c.index;
  }
  if (disk!.wakeSet !== undefined && (!Array.isArray(disk!.wakeSet) || !disk!.wakeSet.every((i) => disk!.chunks.some((c) => c.index === i)))) {
    fail('disk.wakeSet names a chunk the disk does not list');
  }
  for (const key of ['pristineState', 'bootState'] as const) {
    const state = m[key] as (ImageFile & { compressedSize: number }) | undefined;
    if (state !== undefined && (!state || typeof state.file !== 'string' || typeof state.size !== 'number' || !HEX64.test(state.sha256 ?? ''))) fail(`${key} is incomplete`);
    const packed = (state as { packedSha256?: unknown } | undefined)?.packedSha256;
    if (packed !== undefined && (typeof packed !== 'string' || !HEX64.test(packed))) fail(`${key}.packedSha256 is not a sha256`);
  }
  return value as ImageManifest;
}

/** Fetches and validates `<baseUrl>/manifest.json`. */
export async function fetchManifest(baseUrl: string, fetchFn: FetchLike = fetch): Promise<ImageManifest> {
  const url = joinUrl(baseUrl, 'manifest.json');
  let response: Response;
  try {
    response = await fetchFn(url);
  } catch (cause) {
    throw new ImageError('fetch_failed', `could not fetch the machine image's manifest (${url})`, { cause });
  }
  if (!response.ok) throw new ImageError('fetch_failed', `could not fetch the machine image's manifest (${url}): HTTP ${response.status}`);
  return parseManifest(await response.json());
}

export interface FillProgress {
  chunksDone: number;
  chunksTotal: number;
  bytesDone: number; // compressed bytes fetched
  bytesTotal: number;
}

export interface FillOptions {
  fetch?: FetchLike;
  /** Attempts per chunk before giving up (default 3). */
  attempts?: number;
  onProgress?: (progress: FillProgress) => void;
  signal?: AbortSignal;
}

/**
 * Writes the pristine disk into `file`: truncated to the disk size (unlisted chunks read as
 * zeros), then each listed chunk fetched, inflated, checked and written. Throws ImageError
 * naming the chunk after `attempts` failures, or with code 'quota' when storage is full.
 */
export async function fillDisk(manifest: ImageManifest, baseUrl: string, file: SyncFile, options: FillOptions = {}): Promise<void> {
  const { chunks, size, chunkSize } = manifest.disk;
  const progress: FillProgress = {
    chunksDone: 0,
    chunksTotal: chunks.length,
    bytesDone: 0,
    bytesTotal: chunks.reduce((n, c) => n + c.compressedSize, 0),
  };
  guardWrite(() => {
    file.truncate(0);
    file.truncate(size);
  });
  options.onProgress?.({ ...progress });
  for (const chunk of chunks) {
    options.signal?.throwIfAborted();
    const bytes = await withRetries(options.attempts ?? 3, `disk chunk ${chunk.index} (${chunk.file})`, async () => {
      const raw = await fetchGzip(joinUrl(baseUrl, chunk.file), options.fetch);
      if (raw.length !== Math.min(chunkSize, size - chunk.index * chunkSize)) {
        throw new ImageError('checksum', `disk chunk ${chunk.index} has ${raw.length} bytes`);
      }
      await verify(raw, chunk.sha256, `disk chunk ${chunk.index}`);
      return raw;
    });
    guardWrite(() => writeFully(file, bytes, chunk.index * chunkSize));
    progress.chunksDone++;
    progress.bytesDone += chunk.compressedSize;
    options.onProgress?.({ ...progress });
  }
  guardWrite(() => file.flush());
}

export type ImageRole = keyof ImageManifest['files'];

/** Fetches one of the boot files (kernel, initrd, BIOS) and checks its size and sha256. */
export async function fetchImageFile(manifest: ImageManifest, baseUrl: string, role: ImageRole, options: { fetch?: FetchLike; attempts?: number } = {}): Promise<ArrayBuffer> {
  const entry = manifest.files[role];
  const bytes = await withRetries(options.attempts ?? 3, `the ${role} (${entry.file})`, async () => {
    const data = await fetchBytes(joinUrl(baseUrl, entry.file), options.fetch);
    if (data.length !== entry.size) throw new ImageError('checksum', `the ${role} has ${data.length} bytes, expected ${entry.size}`);
    await verify(data, entry.sha256, `the ${role}`);
    return data;
  });
  return toArrayBuffer(bytes);
}

/**
 * Fetches the image's pristine post-boot state (null when the image has none), inflated and
 * checked: restoring it on the freshly filled disk makes the first start a wake.
 */
export async function fetchPristineState(manifest: ImageManifest, baseUrl: string, options: { fetch?: FetchLike; attempts?: number } = {}): Promise<ArrayBuffer | null> {
  return manifest.pristineState ? fetchSavedState(manifest.pristineState, baseUrl, options) : null;
}

/**
 * Fetches one of the image's saved states, unpacked as it arrives and checked against its sha256.
 * Read as a stream, unlike the chunks (see responseBytes): the renderer keeps the 13 MB it
 * streamed, but the first start of a new user waits for this state, and unpacking it while it
 * downloads saves that start 0.3-0.5 s.
 */
export async function fetchSavedState(entry: ImageFile, baseUrl: string, options: { fetch?: FetchLike; attempts?: number } = {}): Promise<ArrayBuffer> {
  const bytes = await withRetries(options.attempts ?? 3, `the saved state (${entry.file})`, async () => {
    const response = await fetchOk(joinUrl(baseUrl, entry.file), options.fetch);
    const unpacker = new StateUnpacker(entry.size);
    const reader = response.body?.getReader(); // none: an empty body, refused by end()
    for (let read = await reader?.read(); read && !read.done; read = await reader!.read()) unpacker.push(read.value);
    const raw = unpacker.end();
    await verify(raw, entry.sha256, 'the saved state');
    return raw;
  });
  return toArrayBuffer(bytes);
}

const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const GZIP_MAGIC = [0x1f, 0x8b];
const startsWith = (bytes: Uint8Array, magic: number[]) => magic.length <= bytes.length && magic.every((b, i) => bytes[i] === b);

/** Whether a saved state's bytes are packed (zstd or gzip) rather than raw. */
export function isPackedState(bytes: Uint8Array): boolean {
  return startsWith(bytes, ZSTD_MAGIC) || startsWith(bytes, GZIP_MAGIC);
}

/** A saved state's raw bytes, whole: zstd or gzip as the image ships it, or already unpacked. */
export function unpackSavedState(body: Uint8Array, size: number): Uint8Array {
  const unpacker = new StateUnpacker(size);
  unpacker.push(body);
  return unpacker.end();
}

/**
 * Unpacks a saved state while it downloads, into one buffer of its known size: the image ships
 * it as zstd (gzip before), and a server that sent it with a Content-Encoding the browser decoded
 * delivers it raw. Throws ImageError('checksum') for bytes that do not unpack to `size`.
 */
class StateUnpacker {
  private readonly out: Uint8Array;
  private length = 0;
  private head: Uint8Array = new Uint8Array(0);
  private sink: ((chunk: Uint8Array, final: boolean) => void) | null = null;

  constructor(private readonly size: number) {
    this.out = new Uint8Array(size);
  }

  push(chunk: Uint8Array): void {
    if (!this.sink) {
      // The format is known from the first four bytes, which may come in more than one chunk.
      this.head = this.head.length ? concatBytes(this.head, chunk) : chunk;
      if (this.head.length < ZSTD_MAGIC.length) return;
      this.sink = this.sinkFor(this.head);
      chunk = this.head;
      this.head = new Uint8Array(0);
    }
    this.guard(() => this.sink!(chunk, false));
  }

  end(): Uint8Array {
    const rest = this.sink ? new Uint8Array(0) : this.head; // a body shorter than four bytes
    this.sink ??= this.sinkFor(rest);
    this.guard(() => this.sink!(rest, true));
    if (this.length !== this.size) throw new ImageError('checksum', `the saved state has ${this.length} bytes, expected ${this.size}`);
    return this.out;
  }

  private readonly put = (data: Uint8Array): void => {
    if (this.length + data.length > this.size) throw new ImageError('checksum', `the saved state has more than the ${this.size} bytes expected`);
    this.out.set(data, this.length);
    this.length += data.length;
  };

  private sinkFor(head: Uint8Array): (chunk: Uint8Array, final: boolean) => void {
    if (startsWith(head, ZSTD_MAGIC)) {
      const zstd = new Unzstd((data) => this.put(data));
      return (chunk, final) => zstd.push(chunk, final);
    }
    if (startsWith(head, GZIP_MAGIC)) {
      const gunzip = new Gunzip((data) => this.put(data));
      return (chunk, final) => gunzip.push(chunk, final);
    }
    return this.put;
  }

  private guard(run: () => void): void {
    try {
      run();
    } catch (cause) {
      if (cause instanceof ImageError) throw cause;
      throw new ImageError('checksum', `the saved state does not unpack: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    }
  }
}

/**
 * A response's bytes, read through a Blob. In a worker, Chromium keeps the memory that
 * `Response.arrayBuffer()` and body streams took: 3,000 fetches of 70 KB (the image's chunks)
 * left the renderer 210 MB larger for good, and through a Blob 0 MB larger (measured in Chromium
 * 156, 2026-11-29; the browser process holds the blob's bytes only until it is collected).
 */
export async function responseBytes(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await (await response.blob()).arrayBuffer());
}

/** The bytes as an ArrayBuffer of their own: their buffer itself when they fill it, else a copy. */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return (whole ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) as ArrayBuffer;
}

async function verify(bytes: Uint8Array, expected: string, what: string): Promise<void> {
  const actual = await sha256Hex(bytes);
  if (actual !== expected) throw new ImageError('checksum', `${what} is corrupt (sha256 ${actual.slice(0, 12)}…, expected ${expected.slice(0, 12)}…)`);
}

/** Why a fetch of the image failed, in words for the user (no address): offline, an HTTP status, or no answer. */
export function whyNotFetched(error: ImageError): string {
  if ((globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine === false) return 'this device is offline';
  const status = / HTTP (\d{3})$/.exec(error.message)?.[1];
  return status ? `the image's server answered HTTP ${status}` : "the image's server cannot be reached";
}

export async function fetchOk(url: string, fetchFn: FetchLike = fetch): Promise<Response> {
  let response: Response;
  try {
    response = await fetchFn(url);
  } catch (cause) {
    throw new ImageError('fetch_failed', `could not fetch ${url}`, { cause });
  }
  if (!response.ok) throw new ImageError('fetch_failed', `could not fetch ${url}: HTTP ${response.status}`);
  return response;
}

async function fetchBytes(url: string, fetchFn?: FetchLike): Promise<Uint8Array> {
  return responseBytes(await fetchOk(url, fetchFn));
}

/** A gzip file's inflated bytes; a server that sent it with Content-Encoding: gzip already inflated it. */
async function fetchGzip(url: string, fetchFn?: FetchLike): Promise<Uint8Array> {
  const response = await fetchOk(url, fetchFn);
  const bytes = await responseBytes(response);
  const inflatedOnTheWay = /\bgzip\b/i.test(response.headers.get('content-encoding') ?? '');
  return inflatedOnTheWay && !(bytes[0] === 0x1f && bytes[1] === 0x8b) ? bytes : gunzip(bytes);
}

export async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  try {
    const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (cause) {
    throw new ImageError('checksum', 'a chunk does not inflate as gzip', { cause });
  }
}

export async function withRetries<T>(attempts: number, what: string, run: () => Promise<T>): Promise<T> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await run();
    } catch (error) {
      lastError = error;
    }
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  const code = lastError instanceof ImageError ? lastError.code : 'fetch_failed';
  throw new ImageError(code, `${what} failed after ${attempts} attempts: ${reason}`, { cause: lastError });
}

function guardWrite(run: () => void): void {
  try {
    run();
  } catch (cause) {
    if (cause instanceof Error && cause.name === 'QuotaExceededError') {
      throw new ImageError('quota', "the browser's storage is full: the computer's disk does not fit", { cause });
    }
    throw new ImageError('write_failed', `could not write the computer's disk: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path}`;
}
