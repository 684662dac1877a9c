// A stack's machine made ready to start: the image's manifest and boot files, the stack's disk
// (its overlay over the image's shared chunks, made anew on a first start or an image change),
// and the Machine wired to the worker's status, terminal, network and saves.
import wasmUrl from 'v86/build/v86.wasm?url';
import { BaseChunks } from '../disk/base-chunks.ts';
import { opfsChunkFiles } from '../disk/chunk-files.ts';
import { LayeredDisk } from '../disk/layered-disk.ts';
import { Overlay, OverlayError } from '../disk/overlay.ts';
import { fetchImageFile, fetchManifest, fetchPristineState, joinUrl, type ImageManifest } from '../image.ts';
import { Machine } from '../machine.ts';
import type { MachineBootFiles } from '../machine-contract.ts';
import { openBaseDir, openOpfsMachine, readWarmSet, type OpfsMachineFiles } from '../opfs-store.ts';
import { readJournal, writeJournal } from '../opfs-workspace.ts';
import { opfsWorkspaceFs } from '../opfs-workspace-fs.ts';
import type { FillReason, VmStartOptions } from '../protocol.ts';
import { DISK_PACK, isStoredImageUrl, packedChunkFiles, storedImageFile } from '../stored-image.ts';
import type { VmContext } from './context.ts';
import { guardStorage } from './errors.ts';
import type { VmNetworkNotices } from './network-notices.ts';
import type { QuietTime } from './quiet-time.ts';

/** 12 MB in 10 s is ~10 Mbit/s: on a slower line the kernel (precached) boots sooner. */
const BOOT_STATE_WAIT_MS = 10_000;

export interface MachineSetup {
  /** The stack's machine, its disk made anew when `forceFill` says so (or its overlay says it must be). */
  prepare(options: VmStartOptions, forceFill: FillReason | null): Promise<Machine>;
  /** The image's chunks for `manifest`, served from `baseUrl` (the one store this worker keeps). */
  baseFor(manifest: ImageManifest, baseUrl: string): Promise<BaseChunks>;
}

export function createMachineSetup(ctx: VmContext, notices: VmNetworkNotices, quiet: QuietTime): MachineSetup {
  const { deps, imageFetch } = ctx;
  let baseChunksUrl = '';

  async function prepare(options: VmStartOptions, forceFill: FillReason | null): Promise<Machine> {
    const manifest = await fetchManifest(options.imageBaseUrl, imageFetch);
    const fetchFile = (role: 'bios' | 'vgaBios' | 'kernel' | 'initrd') => fetchImageFile(manifest, options.imageBaseUrl, role, { fetch: imageFetch });
    const [bios, vgaBios] = await Promise.all([fetchFile('bios'), fetchFile('vgaBios')]);
    // The kernel and initrd (7.5 MB, checksummed) only for a cold boot: a wake never reads them.
    const kernel = async () => {
      const [k, i] = await Promise.all([fetchFile('kernel'), fetchFile('initrd')]);
      return { kernel: k, initrd: i };
    };
    const files = (ctx.files ??= await openOpfsMachine(await deps.storageRoot(), options.stackId));
    const base = await baseFor(manifest, options.imageBaseUrl);
    // A cold boot restores the image's boot state (the kernel held before it mounts the disk),
    // kept in this browser beside the disk's chunks; the kernel when it cannot be had.
    const boot: MachineBootFiles = { bios, vgaBios, kernel, bootState: () => bootStateInTime(base, deps.bootStateWaitMs ?? BOOT_STATE_WAIT_MS), cmdline: manifest.cmdline, memoryMiB: manifest.memoryMiB, agentPort: manifest.agent.virtioConsolePort };
    const meta = files.readMeta();
    let overlay: Overlay | null = null;
    let reason: FillReason | null =
      forceFill ?? (meta.imageHash === null ? (files.overlay.map.size > 0 ? 'incomplete' : 'first_start') : meta.imageHash !== manifest.recipeHash ? 'image_changed' : null);
    if (!reason) {
      try {
        overlay = Overlay.open(files.overlay.data, files.overlay.map, manifest.disk.size);
      } catch (error) {
        if (!(error instanceof OverlayError)) throw error;
        console.warn('the disk overlay is unreadable; the computer starts over from the image', error);
        reason = 'incomplete';
      }
    }
    if (reason) overlay = await fill(ctx, files, base, options.imageBaseUrl, reason);
    ctx.overlayInUse = overlay;
    if (!reason) {
      // What this stack read last time, loaded ahead of the guest, whose caches a save emptied.
      const vmDir = files.vmDir;
      const started = performance.now();
      void readWarmSet(vmDir)
        .then(async (indices) => {
          const loaded = await base.warm(indices);
          console.info(`disk: ${loaded} of ${indices.length} chunks read last time loaded ahead in ${Math.round(performance.now() - started)} ms`);
        })
        .catch((error: unknown) => console.warn('could not load the disk ahead of the computer', error));
    }
    await base.pin(0);
    ctx.opened = { options, manifest, boot };
    return wire(files, boot, new LayeredDisk(overlay!, base), options);
  }

  /** The Machine over the stack's files and disk, telling the worker's listeners what it does. */
  function wire(machineFiles: OpfsMachineFiles, boot: MachineBootFiles, disk: LayeredDisk, options: VmStartOptions): Machine {
    const { link, traffic } = notices;
    const next = new Machine({
      files: boot,
      disk,
      store: {
        ...machineFiles.store,
        // The guest writing its disk on its own (no command, no keystroke) makes the saved state
        // stale too: it is saved again after quiet time, so a reload still wakes where it was.
        markDiskDirty() {
          machineFiles.store.markDiskDirty();
          if (ctx.status.state === 'ready' && !ctx.checkpointTimer) quiet.scheduleCheckpoint(false);
        },
      },
      wasmPath: deps.wasmPath ?? wasmUrl,
      ...(deps.wasmModule ? { wasmFn: instantiateFrom(deps.wasmModule) } : {}),
      ...(deps.createEmulator ? { createEmulator: deps.createEmulator } : {}),
      workspace: {
        fs: opfsWorkspaceFs(machineFiles.stackDir),
        read: () => readJournal(machineFiles.vmDir),
        write: async (snapshot) => {
          ctx.savedJournal = snapshot;
          await writeJournal(machineFiles.vmDir, snapshot);
        },
      },
      link,
      traffic,
    });
    link.set(options.network ?? null, options.offline);
    next.onStatus((s) => ctx.emit(s));
    next.onSerial((bytes) => {
      ctx.lastTerminalUse = Date.now();
      ctx.terminalListeners.forEach((l) => l(bytes));
    });
    return next;
  }

  async function baseFor(manifest: ImageManifest, baseUrl: string): Promise<BaseChunks> {
    if (ctx.baseChunks?.manifest.recipeHash === manifest.recipeHash && baseChunksUrl === baseUrl) return ctx.baseChunks;
    // A stored image's chunks stay in its own folder; a served image's are shared by every stack.
    const chunkFiles = isStoredImageUrl(baseUrl)
      ? packedChunkFiles(manifest, (await storedImageFile(deps.storageRoot, joinUrl(baseUrl, DISK_PACK))) ?? new File([], DISK_PACK))
      : opfsChunkFiles(await openBaseDir(await deps.storageRoot()));
    baseChunksUrl = baseUrl;
    const base = new BaseChunks(manifest, baseUrl, chunkFiles, {
      fetch: imageFetch,
      onWaiting: (reason) => {
        if (!reason) return;
        const bytes = new TextEncoder().encode(`\r\n\x1b[33m[computer] ${reason}\x1b[0m\r\n`);
        ctx.writeTerminal(bytes);
        notices.record(reason);
      },
    });
    ctx.baseChunks = base;
    return base;
  }

  return { prepare, baseFor };
}

/**
 * The boot state when this browser has it or can fetch it within `waitMs` (BOOT_STATE_WAIT_MS,
 * 12 MB: on a slow line the kernel, which is precached, boots sooner); the fetch goes on regardless
 * and keeps it for the next cold boot. Null: the kernel boots.
 */
async function bootStateInTime(base: BaseChunks, waitMs: number): Promise<ArrayBuffer | null> {
  const loading = base.bootState();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs)));
  try {
    const state = await Promise.race([loading, late]);
    if (state !== 'late') return state;
    console.info("the computer's boot state is still coming: it starts from its kernel");
    loading.catch((error: unknown) => console.warn("the computer's boot state could not be fetched", error));
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A new disk for the stack: an empty overlay over the image, the chunks that waking and a first
 * command read fetched into this browser (when not there already), and the image's pristine
 * post-boot state, so the first start wakes in about a second. imageHash is recorded last: a
 * start cut short (quota, closed tab) is begun again.
 */
async function fill(ctx: VmContext, target: OpfsMachineFiles, base: BaseChunks, baseUrl: string, reason: FillReason): Promise<Overlay> {
  const manifest = base.manifest;
  target.writeMeta({ imageHash: null, state: null, disk: null });
  await target.store.clearState();
  const overlay = guardStorage(() => Overlay.create(target.overlay.data, target.overlay.map, manifest.disk.size));
  const wakeSet = manifest.disk.wakeSet ?? [];
  const stateBytes = manifest.pristineState?.compressedSize ?? 0;
  const chunkBytes = wakeSet.reduce((n, i) => n + (base.chunkAt(i)?.compressedSize ?? 0), 0);
  const total = { chunksTotal: wakeSet.length + (stateBytes ? 1 : 0), bytesTotal: chunkBytes + stateBytes };
  ctx.emit({ state: 'downloading', reason, chunksDone: 0, bytesDone: 0, ...total });
  const started = performance.now();
  let chunksDone = 0;
  let wakeBytes = 0;
  const chunks = base.ensureStored(wakeSet, (done, _total, bytes) => {
    chunksDone = done;
    wakeBytes = bytes;
    ctx.emit({ state: 'downloading', reason, chunksDone: done, bytesDone: bytes, ...total });
  });
  // The pristine state matches the image's disk byte for byte, hence one generation for both.
  // Fetched beside the chunks: on a slow line the two share it, and neither waits for the other.
  let chunksMs = 0;
  const [, stateBytes_] = await Promise.all([chunks.then(() => (chunksMs = performance.now() - started)), fetchPristineState(manifest, baseUrl, { fetch: ctx.imageFetch })]);
  const fetchedMs = performance.now() - started;
  if (stateBytes_) {
    const generation = `pristine-${manifest.recipeHash}`;
    // The share the pristine state's guest holds (its mount of /workspace), kept beside it.
    const share = manifest.pristineState?.workspace;
    if (share) await writeJournal(target.vmDir, { generation, ...share });
    await target.store.writeState(stateBytes_, generation);
  }
  console.info(
    `computer set up in ${Math.round(performance.now() - started)} ms: ${JSON.stringify({ chunks: chunksDone, chunkBytes: wakeBytes, chunksMs: Math.round(chunksMs), stateFetchedMs: Math.round(fetchedMs), stateWrittenMs: Math.round(performance.now() - started - fetchedMs) })}`,
  );
  ctx.emit({ state: 'downloading', reason, chunksDone: total.chunksTotal, bytesDone: total.bytesTotal, ...total });
  target.writeMeta({ ...target.readMeta(), imageHash: manifest.recipeHash });
  return overlay;
}

/** Instantiates the precompiled module; if compiling failed, v86 fetches and compiles it itself. */
function instantiateFrom(module: Promise<WebAssembly.Module>) {
  return async (imports: WebAssembly.Imports): Promise<WebAssembly.Exports> => {
    const compiled = await module.catch(() => null);
    if (compiled) return (await WebAssembly.instantiate(compiled, imports)).exports;
    const bytes = await (await fetch(wasmUrl)).arrayBuffer();
    return (await WebAssembly.instantiate(bytes, imports)).instance.exports;
  };
}
