// The machine image's disk as a content-addressed store shared by every stack: each chunk the
// manifest lists is kept once per browser, gzip as shipped, under OPFS `base/<sha256>`, fetched
// the first time any stack reads it (or by the background download). Reads inflate a chunk and
// keep the last few inflated in memory.
import { gunzipSync } from 'fflate';
import { sha256Hex } from '../../storage/hash.ts';
import { fetchOk, ImageError, isPackedState, joinUrl, responseBytes, toArrayBuffer, unpackSavedState, type DiskChunk, type FetchLike, type ImageManifest, whyNotFetched } from '../image.ts';
import type { ChunkFiles } from './chunk-files.ts';

/** Gzip bytes of chunks kept in memory, and the share of them a start loads ahead (warm()). */
const PACKED_BUDGET = 64 * 2 ** 20;
/** Gzip bytes of chunks kept once the computer is quiet (trim()). */
const QUIET_PACKED_BUDGET = 8 * 2 ** 20;
const WARM_BUDGET = 48 * 2 ** 20;
/** Chunks read ahead of a guest read that went to storage (4 MiB of disk). */
const READ_AHEAD = 16;

/** A fetched chunk's gzip bytes, and why they could not be stored (kept in memory then). */
interface Fetched {
  packed: Uint8Array;
  unstored: ImageError | null;
}

/** A fetch of a chunk: its bytes once checked, and then once stored (or why not). */
interface Fetching {
  checked: Promise<Uint8Array>;
  stored: Promise<Fetched>;
}

export interface BaseProgress {
  /** Chunks of the image stored in this browser, of all it lists (identical chunks count once). */
  chunksDone: number;
  chunksTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface BaseChunksOptions {
  fetch?: FetchLike;
  /** Bytes of inflated chunks kept in memory (default 24 MiB). */
  cacheBytes?: number;
  /**
   * A read the guest is waiting for cannot get its chunk (offline, or the server fails): called
   * with why, then with null once it arrived. The read waits and retries; the guest never gets
   * bytes that are not the image's.
   */
  onWaiting?: (reason: string | null) => void;
  /** First and longest pause between tries of a chunk a read waits for (ms). */
  retryMs?: [number, number];
}

export class BaseChunks {
  private readonly byIndex = new Map<number, DiskChunk>();
  private readonly unique = new Map<string, DiskChunk>();
  private readonly cache = new Map<number, Uint8Array>();
  private readonly pinned = new Map<number, Uint8Array>();
  /**
   * The gzip bytes of chunks read in this worker (up to 64 MiB): a chunk evicted from the
   * inflated cache comes back synchronously, with no trip to storage. ext4 scatters files, so
   * a program's reads return to the same chunks at different times.
   */
  private readonly packed = new Map<number, Uint8Array>();
  private packedBytes = 0;
  /** When the guest last read the image (Date.now()), and whether trim() ran since. */
  private lastReadAt = 0;
  private trimmed = true;
  private readonly loading = new Map<number, Promise<Uint8Array>>();
  /** Chunks the guest read, least recently first (the warm set a next start loads early). */
  private readonly used = new Map<number, true>();
  /** Counts chunks the guest read for the first time in this worker (a changed warm set). */
  usedChanges = 0;
  private readonly storing = new Map<string, Fetching>();
  private readonly reading = new Map<number, Promise<Uint8Array | null>>();
  /** warm() calls running (the start's warm set, a read-ahead). */
  private warming = 0;
  private stored: Set<string> | null = null;
  private bootStateLoading: Promise<ArrayBuffer | null> | null = null;
  private waiting = 0;
  /** Bytes fetched from the image's server by this instance (benchmarks). */
  fetchedBytes = 0;
  /**
   * When a guest read last had to wait for a chunk (storage or network), in Date.now() time:
   * the guest is busy with its disk, and the background download holds back meanwhile.
   */
  lastWaitedAt = 0;

  constructor(
    readonly manifest: ImageManifest,
    private readonly baseUrl: string,
    private readonly files: ChunkFiles,
    private readonly options: BaseChunksOptions = {},
  ) {
    for (const chunk of manifest.disk.chunks) {
      this.byIndex.set(chunk.index, chunk);
      if (!this.unique.has(chunk.sha256)) this.unique.set(chunk.sha256, chunk);
    }
  }

  get chunkSize(): number {
    return this.manifest.disk.chunkSize;
  }

  /** The chunk at an index, or undefined where the image is all zeros. */
  chunkAt(index: number): DiskChunk | undefined {
    return this.byIndex.get(index);
  }

  /**
   * Loads a chunk and keeps it in memory for good: v86 reads the disk's first sector synchronously
   * when it makes the drive (its geometry), before any read could wait.
   */
  async pin(index: number): Promise<void> {
    this.pinned.set(index, await this.load(index));
  }

  /** The inflated chunk if it is in memory now. */
  peek(index: number): Uint8Array | null {
    this.lastReadAt = Date.now();
    this.trimmed = false;
    const pinned = this.pinned.get(index);
    if (pinned) return pinned;
    if (!this.used.delete(index)) this.usedChanges++;
    this.used.set(index, true);
    const bytes = this.cache.get(index);
    if (!bytes) {
      const packed = this.packed.get(index);
      const raw = packed && inflate(packed);
      if (!raw) return null;
      this.remember(index, raw);
      return raw;
    }
    this.cache.delete(index); // most recently used last
    this.cache.set(index, bytes);
    return bytes;
  }

  /**
   * Trims (trim()) once the guest has read nothing from the image for `quietMs`, and once only
   * until it reads again: a program's start reads in bursts, a pause that long means it is done.
   */
  trimWhenQuiet(quietMs: number, now = Date.now()): boolean {
    if (this.trimmed || now - this.lastReadAt < quietMs) return false;
    this.trim();
    return true;
  }

  /**
   * Gives back the memory of chunks kept for the guest's next reads, down to `packedBudget` bytes
   * of gzip (the ones read last stay), while the computer is quiet: up to 88 MiB in use otherwise.
   * A chunk this browser could not store stays: there is no other copy of it here.
   */
  trim(packedBudget = QUIET_PACKED_BUDGET): void {
    this.trimmed = true;
    this.cache.clear();
    for (const [index, bytes] of this.packed) {
      if (this.packedBytes <= packedBudget) break;
      const chunk = this.byIndex.get(index);
      if (!chunk || !this.stored?.has(chunk.sha256)) continue;
      this.packed.delete(index);
      this.packedBytes -= bytes.length;
    }
  }

  /**
   * The inflated chunk: from memory, from the store, or fetched (then stored). A guest read
   * (`wait`) retries until it has it; otherwise a failed fetch throws ImageError.
   */
  load(index: number, wait = false): Promise<Uint8Array> {
    const cached = this.peek(index);
    if (cached) return Promise.resolve(cached);
    const chunk = this.byIndex.get(index);
    if (!chunk) return Promise.resolve(new Uint8Array(this.chunkSize));
    if (wait) this.lastWaitedAt = Date.now();
    let pending = this.loading.get(index);
    if (!pending) {
      pending = (wait ? this.untilLoaded(chunk) : this.obtain(chunk)).then(
        (bytes) => {
          this.remember(index, bytes);
          return bytes;
        },
      );
      const settled = pending.finally(() => this.loading.delete(index));
      settled.catch(() => {});
      this.loading.set(index, pending);
    }
    return pending;
  }

  /** Makes sure chunks are stored in this browser (not kept in memory). */
  async ensureStored(indices: Iterable<number>, onProgress?: (done: number, total: number, bytes: number) => void): Promise<void> {
    const stored = await this.storedSet();
    const wanted = [...new Set([...indices].map((i) => this.byIndex.get(i)).filter((c): c is DiskChunk => !!c && !stored.has(c.sha256)))];
    let done = 0;
    let bytes = 0;
    onProgress?.(0, wanted.length, 0);
    await parallel(wanted, 4, async (chunk) => {
      await this.fetchAndKeep(chunk);
      done++;
      bytes += chunk.compressedSize;
      onProgress?.(done, wanted.length, bytes);
    });
  }

  /**
   * The chunks the guest read most recently, most recent first, as many as `budget` bytes of
   * their gzip files: what a next start of this stack loads ahead of the guest (warm()).
   */
  recentlyUsed(budget = WARM_BUDGET): number[] {
    const out: number[] = [];
    let bytes = 0;
    for (const index of [...this.used.keys()].reverse()) {
      const chunk = this.byIndex.get(index);
      if (!chunk) continue;
      if ((bytes += chunk.compressedSize) > budget) break;
      out.push(index);
    }
    return out;
  }

  /**
   * Loads the gzip bytes of chunks this browser holds into memory ahead of the guest, two at a
   * time, within `budget` bytes: after a reload the guest's own caches are empty, and every file
   * a program opens would otherwise wait for storage. Chunks not stored are left alone (no
   * network); a read the guest issues meanwhile goes first, by its own path.
   */
  async warm(indices: number[], budget = WARM_BUDGET): Promise<number> {
    const stored = await this.storedSet();
    let bytes = 0;
    const wanted: DiskChunk[] = [];
    for (const index of indices) {
      const chunk = this.byIndex.get(index);
      if (!chunk || !stored.has(chunk.sha256) || this.packed.has(index)) continue;
      if ((bytes += chunk.compressedSize) > budget) break;
      wanted.push(chunk);
    }
    let loaded = 0;
    this.warming++;
    try {
      await this.warmChunks(wanted, () => loaded++);
    } finally {
      this.warming--;
    }
    return loaded;
  }

  /** Two at a time: storage reads the guest waits for must not queue behind a crowd of these. */
  private async warmChunks(wanted: DiskChunk[], onLoaded: () => void): Promise<void> {
    await parallel(wanted, 2, async (chunk) => {
      if (this.packed.has(chunk.index) || this.cache.has(chunk.index)) return;
      const packed = await this.readPacked(chunk);
      if (!packed || this.packed.has(chunk.index)) return;
      this.keepPacked(chunk.index, packed);
      onLoaded();
    });
  }

  /**
   * The image's boot state (manifest.bootState: the kernel held before it mounts the disk),
   * unpacked and checked, or null when the image has none. Kept beside the chunks (packed, under
   * the sha256 of its raw bytes), so a cold boot offline has it once a cold boot or downloadAll
   * fetched it. Throws when it is neither here nor fetchable (the kernel boots instead).
   */
  bootState(): Promise<ArrayBuffer | null> {
    // One load at a time: a cold boot and the background download may both want it.
    this.bootStateLoading ??= this.loadBootState().finally(() => (this.bootStateLoading = null));
    return this.bootStateLoading;
  }

  private async loadBootState(): Promise<ArrayBuffer | null> {
    const entry = this.manifest.bootState;
    if (!entry) return null;
    const stored = await this.storedSet();
    if (stored.has(entry.sha256)) {
      const raw = await this.unpackBootState(await this.files.read(entry.sha256));
      if (raw) return toArrayBuffer(raw);
      stored.delete(entry.sha256); // gone or damaged: fetched again
      await this.files.remove(entry.sha256);
    }
    const response = await fetchOk(joinUrl(this.baseUrl, entry.file), this.options.fetch);
    const body = await responseBytes(response);
    const raw = await this.unpackBootState(body);
    if (!raw) throw new ImageError('checksum', `the computer's boot state (${entry.file}) is corrupt`);
    try {
      // Kept packed as shipped; a server may have sent it unpacked (Content-Encoding).
      await this.files.write(entry.sha256, isPackedState(body) ? body : await gzip(raw));
      stored.add(entry.sha256);
    } catch (error) {
      console.warn("the computer's boot state is used without being kept in this browser", error);
    }
    // The unpacker fills one buffer of the state's size: handed over as it is, not copied.
    return toArrayBuffer(raw);
  }

  /** The boot state's raw bytes from what was stored or fetched, or null when they are not the image's. */
  private async unpackBootState(body: Uint8Array | null): Promise<Uint8Array | null> {
    const entry = this.manifest.bootState;
    if (!body || !entry) return null;
    try {
      const raw = unpackSavedState(body, entry.size);
      return (await sha256Hex(raw)) === entry.sha256 ? raw : null;
    } catch {
      return null;
    }
  }

  /**
   * The boot state stored for a later cold boot offline (the background download), and nothing
   * kept in memory: checked by the shipped file's own hash where the manifest gives it, so it is
   * never unpacked (its 49 MB, and a copy of them for the hash, stayed in the VM worker until a
   * collection, ~140 MB for seconds to minutes); else unpacked to be checked and let go of at once.
   */
  private async keepBootState(): Promise<void> {
    const entry = this.manifest.bootState;
    if (!entry) return;
    await this.bootStateLoading?.catch(() => {}); // a cold boot fetching it meanwhile stores it
    const stored = await this.storedSet();
    if (stored.has(entry.sha256)) return;
    const body = await responseBytes(await fetchOk(joinUrl(this.baseUrl, entry.file), this.options.fetch));
    let packed = body;
    if (!(entry.packedSha256 && isPackedState(body) && (await sha256Hex(body)) === entry.packedSha256)) {
      const raw = await this.unpackBootState(body);
      if (!raw) throw new ImageError('checksum', `the computer's boot state (${entry.file}) is corrupt`);
      if (!isPackedState(body)) packed = await gzip(raw);
    }
    await this.files.write(entry.sha256, packed);
    stored.add(entry.sha256);
  }

  /** How much of the image this browser holds. */
  async progress(): Promise<BaseProgress> {
    const stored = await this.storedSet();
    const progress: BaseProgress = { chunksDone: 0, chunksTotal: this.unique.size, bytesDone: 0, bytesTotal: 0 };
    for (const chunk of this.unique.values()) {
      progress.bytesTotal += chunk.compressedSize;
      if (stored.has(chunk.sha256)) {
        progress.chunksDone++;
        progress.bytesDone += chunk.compressedSize;
      }
    }
    return progress;
  }

  /**
   * Fetches and stores every chunk this browser does not hold yet, two at a time, the wake set
   * first, then the boot state (so a cold boot works offline too; not counted in the progress).
   * Stops at the first failure (thrown: offline, storage full) or when `signal` aborts.
   * `pace` is awaited before each chunk (the caller holds the download back while the user works).
   */
  async downloadAll(onProgress?: (progress: BaseProgress) => void, signal?: AbortSignal, pace?: () => Promise<void>): Promise<BaseProgress> {
    const stored = await this.storedSet();
    const first = new Set(this.manifest.disk.wakeSet ?? []);
    const missing = [...this.unique.values()]
      .filter((c) => !stored.has(c.sha256))
      .sort((a, b) => Number(first.has(b.index)) - Number(first.has(a.index)) || a.index - b.index);
    const progress = await this.progress();
    onProgress?.({ ...progress });
    await parallel(missing, 2, async (chunk) => {
      await pace?.();
      signal?.throwIfAborted();
      // A guest read may have fetched it meanwhile: it counts all the same.
      if (!(await this.storedSet()).has(chunk.sha256)) await this.fetchAndKeep(chunk);
      progress.chunksDone++;
      progress.bytesDone += chunk.compressedSize;
      onProgress?.({ ...progress });
    });
    if (this.manifest.bootState) {
      await pace?.();
      signal?.throwIfAborted();
      await this.keepBootState();
    }
    return progress;
  }

  private async storedSet(): Promise<Set<string>> {
    this.stored ??= await this.files.list();
    return this.stored;
  }

  private keepPacked(index: number, packed: Uint8Array): void {
    if (this.packed.has(index)) return;
    this.packed.set(index, packed);
    this.packedBytes += packed.length;
    while (this.packedBytes > PACKED_BUDGET) {
      const [oldest, bytes] = this.packed.entries().next().value!;
      this.packed.delete(oldest);
      this.packedBytes -= bytes.length;
    }
  }

  private remember(index: number, bytes: Uint8Array): void {
    this.cache.set(index, bytes);
    const limit = Math.max(4, Math.floor((this.options.cacheBytes ?? 24 * 2 ** 20) / this.chunkSize));
    while (this.cache.size > limit) this.cache.delete(this.cache.keys().next().value!);
  }

  /** From the store when it holds a good copy, else from the server (and stored). */
  private async obtain(chunk: DiskChunk): Promise<Uint8Array> {
    const stored = await this.storedSet();
    if (stored.has(chunk.sha256)) {
      this.readAhead(chunk.index);
      const packed = await this.readPacked(chunk);
      const raw = packed && inflate(packed);
      if (raw && raw.length === this.expectedLength(chunk)) {
        this.keepPacked(chunk.index, packed);
        return raw;
      }
      // Gone or damaged (cleared by the browser, a cut write): fetched again.
      stored.delete(chunk.sha256);
      await this.files.remove(chunk.sha256);
    }
    // The guest gets its bytes once they are checked; storing them goes on meanwhile. Storage
    // full: the guest still gets them (kept in memory), and the image stays whole.
    const fetching = this.fetchAndStore(chunk);
    fetching.stored.then(
      ({ unstored }) => unstored && console.warn(`disk chunk ${chunk.index} is used from memory: ${unstored.message}`),
      () => {}, // a failed fetch reaches this read through `checked`
    );
    const packed = await fetching.checked;
    this.keepPacked(chunk.index, packed);
    return inflate(packed)!;
  }

  /** One read of a stored chunk's gzip bytes at a time, whoever wants it (a guest read, warm()). */
  private readPacked(chunk: DiskChunk): Promise<Uint8Array | null> {
    let pending = this.reading.get(chunk.index);
    if (!pending) {
      pending = this.files.read(chunk.sha256).finally(() => this.reading.delete(chunk.index));
      this.reading.set(chunk.index, pending);
    }
    return pending;
  }

  /**
   * A guest read that goes to storage starts reading the stored chunks after it too: ext4 keeps a
   * file's blocks together, so the program's next reads are most likely there, and each read
   * from storage waits several turns of this worker behind the emulator.
   */
  private readAhead(index: number): void {
    // One batch at a time: read-ahead behind read-ahead would flood storage on a cold start.
    if (this.warming > 0) return;
    const next: number[] = [];
    for (let i = index + 1; i <= index + READ_AHEAD; i++) if (this.byIndex.has(i)) next.push(i);
    void this.warm(next, Infinity).catch(() => {});
  }

  private async untilLoaded(chunk: DiskChunk): Promise<Uint8Array> {
    const [first, longest] = this.options.retryMs ?? [1000, 15_000];
    let pause = first;
    let reported = false;
    try {
      for (;;) {
        try {
          return await this.obtain(chunk);
        } catch (error) {
          if (!(error instanceof ImageError) || error.code === 'quota' || error.code === 'write_failed') throw error;
          if (!reported) {
            reported = true;
            this.waiting++;
            this.options.onWaiting?.(await this.missingMessage(error));
          }
          await new Promise((resolve) => setTimeout(resolve, pause));
          pause = Math.min(pause * 2, longest);
        }
      }
    } finally {
      if (reported && --this.waiting === 0) this.options.onWaiting?.(null);
    }
  }

  /**
   * What a read waiting for the network tells the user: how much of the image this browser lacks
   * and what to do, not the chunk's address (a stack imported from a file, offline, in a browser
   * that never downloaded the image wakes this way).
   */
  private async missingMessage(error: ImageError): Promise<string> {
    const why = whyNotFetched(error);
    const { bytesTotal, bytesDone } = await this.progress().catch(() => ({ bytesTotal: 0, bytesDone: 0 }));
    const missing = bytesTotal - bytesDone;
    const size = missing > 0 ? `${megabytes(missing)} of its system image` : 'part of its system image';
    return `The computer needs ${size} that this browser has not downloaded yet, and ${why}. Connect to the internet: the program reading the disk waits and carries on once the parts arrive.`;
  }

  /** One fetch of a chunk at a time, however many reads want it: its gzip bytes, checked, and stored if storage has room. */
  private fetchAndStore(chunk: DiskChunk): Fetching {
    let pending = this.storing.get(chunk.sha256);
    if (!pending) {
      pending = this.fetchChunk(chunk);
      void pending.stored.catch(() => {}).finally(() => this.storing.delete(chunk.sha256));
      this.storing.set(chunk.sha256, pending);
    }
    return pending;
  }

  /** A fetch that must end stored (the first start's chunks, the background download). */
  private async fetchAndKeep(chunk: DiskChunk): Promise<void> {
    // Stored, its bytes are dropped, not let go of: they are the browser's (a Blob read, then
    // hashed), and detaching them only hid them from the collector, so the image's ~300 MB fetched
    // in the background stayed in the VM worker until a full collection (let-go.ts).
    const { unstored } = await this.fetchAndStore(chunk).stored;
    if (unstored) throw unstored;
  }

  private fetchChunk(chunk: DiskChunk): Fetching {
    const checked = (async () => {
      const url = joinUrl(this.baseUrl, chunk.file);
      const response = await fetchOk(url, this.options.fetch);
      const body = await responseBytes(response);
      this.fetchedBytes += body.length;
      return this.checked(chunk, body);
    })();
    const stored = checked.then(async (packed): Promise<Fetched> => {
      try {
        await this.files.write(chunk.sha256, packed);
      } catch (cause) {
        const unstored =
          cause instanceof Error && cause.name === 'QuotaExceededError'
            ? new ImageError('quota', "the browser's storage is full: the computer's system disk does not fit", { cause })
            : new ImageError('write_failed', `could not store the computer's system disk: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
        return { packed, unstored };
      }
      (await this.storedSet()).add(chunk.sha256);
      return { packed, unstored: null };
    });
    checked.catch(() => {}); // its failure reaches whoever awaits it, or `stored`'s
    return { checked, stored };
  }

  /**
   * The chunk's gzip bytes once they are the image's. With the gzip file's own hash in the
   * manifest nothing is inflated (the background download stays light beside the emulator);
   * otherwise, or when a server sent it with Content-Encoding: gzip and the browser inflated it
   * on the way, the inflated bytes are hashed.
   */
  private async checked(chunk: DiskChunk, body: Uint8Array): Promise<Uint8Array> {
    const isGzip = body[0] === 0x1f && body[1] === 0x8b;
    if (isGzip && chunk.gzipSha256 && (await sha256Hex(body)) === chunk.gzipSha256) return body;
    const raw = isGzip ? inflate(body) : body;
    if (!raw) throw new ImageError('checksum', `disk chunk ${chunk.index} does not inflate as gzip`);
    if (raw.length !== this.expectedLength(chunk)) throw new ImageError('checksum', `disk chunk ${chunk.index} has ${raw.length} bytes`);
    const actual = await sha256Hex(raw);
    if (actual !== chunk.sha256) throw new ImageError('checksum', `disk chunk ${chunk.index} is corrupt (sha256 ${actual.slice(0, 12)}…)`);
    return isGzip ? body : gzip(raw);
  }

  private expectedLength(chunk: DiskChunk): number {
    return Math.min(this.chunkSize, this.manifest.disk.size - chunk.index * this.chunkSize);
  }
}

/**
 * Inflates a chunk at once, in this thread. Not DecompressionStream: its stream hops from task
 * to task, and in the VM worker every hop waits for the emulator's next yield, so a guest read
 * that needed a chunk took over 100 ms instead of one or two.
 */
function inflate(packed: Uint8Array): Uint8Array | null {
  try {
    return gunzipSync(packed);
  } catch {
    return null;
  }
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** "183 MB" (decimal, as the browser's own storage figures are shown). */
function megabytes(bytes: number): string {
  return `${Math.max(1, Math.round(bytes / 1e6))} MB`;
}

async function parallel<T>(items: T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (!failed && next < items.length) {
      try {
        await run(items[next++]!);
      } catch (error) {
        failed = true; // the other lanes stop after their current item
        throw error;
      }
    }
  });
  await Promise.all(lanes);
}
