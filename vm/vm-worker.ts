// The VM worker's entry (a dedicated worker): exposes VmApi over comlink, owns the stack's
// machine files in OPFS and the one Machine running in this worker.
import * as Comlink from 'comlink';
import wasmUrl from 'v86/build/v86.wasm?url';
import { AgentError } from './agent-client.ts';
import { BaseChunks, opfsChunkFiles, type BaseProgress } from './disk/base-chunks.ts';
import { LayeredDisk } from './disk/layered-disk.ts';
import { CHANGE_CHUNK, Overlay, OverlayError } from './disk/overlay.ts';
import { fetchImageFile, fetchManifest, fetchPristineState, ImageError, joinUrl, whyNotFetched, type FetchLike, type ImageManifest } from './image.ts';
import { DISK_PACK, isStoredImageUrl, packedChunkFiles, storedImageFetch, storedImageFile } from './stored-image.ts';
import { Machine } from './machine.ts';
import { MachineError, type MachineBootFiles, type MachineOptions } from './machine-contract.ts';
import { letGo } from './let-go.ts';
import { openBaseDir, openOpfsMachine, readWarmSet, writeWarmSet, type OpfsMachineFiles } from './opfs-store.ts';
import { readJournal, writeJournal } from './opfs-workspace.ts';
import { opfsWorkspaceFs } from './opfs-workspace-fs.ts';
import type { Workspace9pSnapshot } from './workspace-9p.ts';
import type { DnsNotice } from './network.ts';
import { installNetworkLink, type LinkScope } from './network-link.ts';
import { createTrafficCounter } from './traffic.ts';
import type { FillReason, VmApi, VmAvailability, VmCapture, VmError, VmResult, VmStartOptions, VmStatus } from './protocol.ts';

export interface VmWorkerDeps {
  storageRoot: () => Promise<FileSystemDirectoryHandle>;
  fetch?: typeof fetch;
  wasmPath?: string;
  /** v86's wasm compiled ahead of time (started when the worker starts). */
  wasmModule?: Promise<WebAssembly.Module>;
  /** Replaces v86 (tests). */
  createEmulator?: MachineOptions['createEmulator'];
  /** Quiet time after the last exec or keystroke before a checkpoint is saved (ms; 0: never). */
  checkpointAfterMs?: number;
  /** How long the guest reads nothing from its disk before the chunks kept in memory go back (15 s). */
  diskQuietMs?: number;
  /** Quiet time after which the machine is suspended to free the CPU and memory (ms; 0: never). */
  suspendAfterMs?: number;
  /**
   * Whose `fetch` (DNS) and `WebSocket` (the relay) v86 uses: the worker's global scope, wrapped
   * so both follow the stack's network of the moment (network-link.ts).
   */
  networkScope?: LinkScope;
  /** How long a cold boot waits for the boot state this browser does not hold yet (ms). */
  bootStateWaitMs?: number;
}

/** 12 MB in 10 s is ~10 Mbit/s: on a slower line the kernel (precached) boots sooner. */
const BOOT_STATE_WAIT_MS = 10_000;
/** How long the guest reads nothing from its disk before the chunks kept in memory go back. */
const DISK_QUIET_MS = 15_000;

/** Builds the VmApi; exported for tests, exposed by this module when run as a worker. */
export function createVmApi(deps: VmWorkerDeps): VmApi {
  // The image is served by the app, or kept in this browser (stored-image.ts) for a stack that
  // came with its own.
  const storedFetch = storedImageFetch(deps.storageRoot);
  const imageFetch: FetchLike = (url) => (isStoredImageUrl(url) ? storedFetch(url) : (deps.fetch ?? fetch)(url));
  const statusListeners = new Set<(status: VmStatus) => void>();
  const terminalListeners = new Set<(bytes: Uint8Array) => void>();
  let status: VmStatus = { state: 'off' };
  let machine: Machine | null = null;
  let files: OpfsMachineFiles | null = null;
  let opened: { options: VmStartOptions; manifest: ImageManifest; boot: MachineBootFiles } | null = null;
  /** The generation of the state being woken from (the journal is trusted only for it). */
  let activeExecs = 0;
  /** Execs asked for and not yet ended: settled once the guest has been handed each. */
  const execsSent = new Map<string, Promise<void>>();
  let checkpointTimer: ReturnType<typeof setTimeout> | null = null;
  let flushTimer: ReturnType<typeof setInterval> | null = null;
  let checkpointing: Promise<unknown> | null = null;
  /**
   * The quiet-time save under way: `taken` once its state is taken and the guest runs on (or once
   * it ended), and that state while it is being written. A checkpoint's capture with nothing
   * happened since uses it rather than wait for the write (seconds on a slow disk).
   */
  let quietSave: { taken: Promise<void>; state: { generation: string; state: ArrayBuffer } | null } | null = null;
  /** The stack worker's file changes being loaded into /workspace, in the order they were told. */
  let hostChanges: Promise<unknown> = Promise.resolve();
  let idleTimer: ReturnType<typeof setTimeout> | null = null;
  /** The last keystroke into the terminal, or output from it: someone is using the computer. */
  let lastTerminalUse = 0;
  let startedAt = 0;
  /** The disk's overlay in use, and what the last capture() took of it (its token, the state's generation). */
  let overlayInUse: Overlay | null = null;
  let lastCapture: { token: string; overlay: Overlay; generation: string | null } | null = null;
  /** The /workspace share's snapshot taken with the last state saved (its generation inside). */
  let savedJournal: Workspace9pSnapshot | null = null;

  // The guest's DNS goes to the proxy's resolver with the current network ticket.
  // Each refusal is told where the command came from: in the bash tool's result for the agent's
  // commands, as a line in the terminal for the user's.
  let noticeCount = 0;
  const recentNotices: { n: number; line: string }[] = [];
  // A resolver asks twice (A and AAAA) and retries: the terminal says each reason once a moment.
  let lastTerminalLine = { line: '', at: 0 };
  const notify = (notice: DnsNotice) => {
    const line = `${notice.name}: ${notice.reason}`;
    recentNotices.push({ n: ++noticeCount, line });
    if (recentNotices.length > 50) recentNotices.shift();
    const now = Date.now();
    if (activeExecs === 0 && (line !== lastTerminalLine.line || now - lastTerminalLine.at > 3000)) {
      lastTerminalLine = { line, at: now };
      const bytes = new TextEncoder().encode(`\r\n\x1b[33m[network] ${line}\x1b[0m\r\n`);
      terminalListeners.forEach((listener) => listener(bytes));
    }
  };
  const link = installNetworkLink(deps.networkScope ?? globalThis, notify);
  // Only frames that have the proxy's relay behind them: offline, the card sends into nothing.
  const traffic = createTrafficCounter(() => link.online);
  const noticesSince = (n: number) => [...new Set(recentNotices.filter((notice) => notice.n > n).map((notice) => notice.line))];

  let lastCheckpoint = 0;
  /** Commands not yet ended, servers included (activeExecs counts a server only while it starts). */
  let runningExecs = 0;
  /**
   * After activity: once the machine has been quiet for a while, save it where it stands (at
   * most every 15 s: a save writes ~100 MB), so a reload or a killed tab still wakes in a second.
   */
  /** `activity`: the user's or the agent's (it also puts off the idle suspend); the guest's own disk writes are not. */
  const scheduleCheckpoint = (activity = true) => {
    const quiet = deps.checkpointAfterMs ?? 4000;
    const after = quiet && Math.max(quiet, lastCheckpoint + 15_000 - Date.now());
    if (checkpointTimer) clearTimeout(checkpointTimer);
    checkpointTimer = null;
    if (activity) scheduleIdleSuspend();
    if (!after) return;
    checkpointTimer = setTimeout(() => {
      checkpointTimer = null;
      if (!machine || activeExecs > 0 || status.state !== 'ready') return; // the command's end schedules it again
      if (checkpointing) return scheduleCheckpoint(false); // a save under way may have begun before the last write
      const current = machine;
      const previous = lastCheckpoint;
      lastCheckpoint = Date.now();
      let took = () => {};
      const save: NonNullable<typeof quietSave> = { taken: new Promise<void>((resolve) => (took = resolve)), state: null };
      quietSave = save;
      checkpointing = current
        .checkpoint(
          undefined,
          (generation, state) => {
            save.state = { generation, state };
            took();
          },
          { quiet: true },
        )
        .catch((error: unknown) => {
          // Typed into meanwhile: the keystrokes scheduled the next save, which need not wait 15 s
          // for this one (nothing was written).
          if (error instanceof MachineError && error.code === 'save_abandoned') {
            lastCheckpoint = previous;
            if (checkpointTimer) scheduleCheckpoint(false);
          } else console.warn('checkpoint failed', error);
        })
        .finally(() => {
          checkpointing = null;
          if (quietSave === save) quietSave = null;
          took();
          // Written: its memory goes back now (a capture that used it took a copy).
          if (save.state) letGo(save.state.state);
          save.state = null;
        });
    }, after);
  };

  /** The idle timer's rest is under way: its "suspended" says so. */
  let restingIdle = false;
  /**
   * Long quiet: a rest, as for a hidden page (not while a command, a server or a terminal job
   * runs; the next exec or keystroke wakes it in about a second). Its "suspended" says `idle`, and
   * the stack ends this worker then: a tab left open in view gives the emulator's memory back too.
   */
  const scheduleIdleSuspend = () => {
    const after = deps.suspendAfterMs ?? 15 * 60_000;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (!after) return;
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (!machine || activeExecs > 0 || status.state !== 'ready') return;
      restingIdle = true;
      void api
        .rest()
        .then((rested) => rested.ok && !rested.value && scheduleIdleSuspend())
        .finally(() => (restingIdle = false));
    }, after);
  };

  const startFlushing = () => {
    scheduleIdleSuspend();
    if (flushTimer) return;
    flushTimer = setInterval(() => {
      if (Date.now() - warmSetSavedAt > 10_000) saveWarmSet();
      // The guest done reading its disk a while: the image's chunks kept for its next reads
      // (up to 88 MiB) go back, read again from storage when wanted.
      baseChunks?.trimWhenQuiet(deps.diskQuietMs ?? DISK_QUIET_MS);
    }, 1000);
  };
  /** What the guest read lately, for the next start to load ahead (not tied to saves: a session that only reads saves nothing). */
  let warmSetSavedAt = 0;
  let warmSetChanges = -1;
  const saveWarmSet = () => {
    warmSetSavedAt = Date.now();
    if (!baseChunks || !files || baseChunks.usedChanges === warmSetChanges) return;
    warmSetChanges = baseChunks.usedChanges;
    void writeWarmSet(files.vmDir, baseChunks.recentlyUsed()).catch(() => {});
  };
  const stopTimers = () => {
    if (checkpointTimer) clearTimeout(checkpointTimer);
    if (flushTimer) clearInterval(flushTimer);
    if (idleTimer) clearTimeout(idleTimer);
    checkpointTimer = null;
    flushTimer = null;
    idleTimer = null;
  };

  const emit = (next: VmStatus) => {
    if (next.state === 'suspended' && restingIdle) next = { state: 'suspended', idle: true };
    status = next;
    for (const listener of statusListeners) listener(next);
  };

  async function prepare(options: VmStartOptions, forceFill: FillReason | null): Promise<Machine> {
    const manifest = await fetchManifest(options.imageBaseUrl, imageFetch);
    const fetchFile = (role: 'bios' | 'vgaBios' | 'kernel' | 'initrd') => fetchImageFile(manifest, options.imageBaseUrl, role, { fetch: imageFetch });
    const [bios, vgaBios] = await Promise.all([fetchFile('bios'), fetchFile('vgaBios')]);
    // The kernel and initrd (7.5 MB, checksummed) only for a cold boot: a wake never reads them.
    const kernel = async () => {
      const [k, i] = await Promise.all([fetchFile('kernel'), fetchFile('initrd')]);
      return { kernel: k, initrd: i };
    };
    files ??= await openOpfsMachine(await deps.storageRoot(), options.stackId);
    const base = await baseFor(manifest, options.imageBaseUrl);
    // A cold boot restores the image's boot state (the kernel held before it mounts the disk),
    // kept in this browser beside the disk's chunks; the kernel when it cannot be had.
    const boot: MachineBootFiles = { bios, vgaBios, kernel, bootState: () => bootStateInTime(base), cmdline: manifest.cmdline, memoryMiB: manifest.memoryMiB, agentPort: manifest.agent.virtioConsolePort };
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
    if (reason) overlay = await fill(files, base, options.imageBaseUrl, reason);
    overlayInUse = overlay;
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
    opened = { options, manifest, boot };
    const machineFiles = files;
    const next = new Machine({
      files: boot,
      disk: new LayeredDisk(overlay!, base),
      store: {
        ...machineFiles.store,
        // The guest writing its disk on its own (no command, no keystroke) makes the saved state
        // stale too: it is saved again after quiet time, so a reload still wakes where it was.
        markDiskDirty() {
          machineFiles.store.markDiskDirty();
          if (status.state === 'ready' && !checkpointTimer) scheduleCheckpoint(false);
        },
      },
      wasmPath: deps.wasmPath ?? wasmUrl,
      ...(deps.wasmModule ? { wasmFn: instantiateFrom(deps.wasmModule) } : {}),
      ...(deps.createEmulator ? { createEmulator: deps.createEmulator } : {}),
      workspace: {
        fs: opfsWorkspaceFs(machineFiles.stackDir),
        read: () => readJournal(machineFiles.vmDir),
        write: async (snapshot) => {
          savedJournal = snapshot;
          await writeJournal(machineFiles.vmDir, snapshot);
        },
      },
      link,
      traffic,
    });
    link.set(options.network ?? null, options.offline);
    next.onStatus((s) => emit(s));
    next.onSerial((bytes) => {
      lastTerminalUse = Date.now();
      terminalListeners.forEach((l) => l(bytes));
    });
    return next;
  }

  /**
   * The boot state when this browser has it or can fetch it within BOOT_STATE_WAIT_MS (12 MB: on
   * a slow line the kernel, which is precached, boots sooner); the fetch goes on regardless and
   * keeps it for the next cold boot. Null: the kernel boots.
   */
  async function bootStateInTime(base: BaseChunks): Promise<ArrayBuffer | null> {
    const loading = base.bootState();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deps.bootStateWaitMs ?? BOOT_STATE_WAIT_MS)));
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
  async function fill(target: OpfsMachineFiles, base: BaseChunks, baseUrl: string, reason: FillReason): Promise<Overlay> {
    const manifest = base.manifest;
    target.writeMeta({ imageHash: null, state: null, disk: null });
    await target.store.clearState();
    const overlay = guardStorage(() => Overlay.create(target.overlay.data, target.overlay.map, manifest.disk.size));
    const wakeSet = manifest.disk.wakeSet ?? [];
    const stateBytes = manifest.pristineState?.compressedSize ?? 0;
    const chunkBytes = wakeSet.reduce((n, i) => n + (base.chunkAt(i)?.compressedSize ?? 0), 0);
    const total = { chunksTotal: wakeSet.length + (stateBytes ? 1 : 0), bytesTotal: chunkBytes + stateBytes };
    emit({ state: 'downloading', reason, chunksDone: 0, bytesDone: 0, ...total });
    const started = performance.now();
    let chunksDone = 0;
    let wakeBytes = 0;
    const chunks = base.ensureStored(wakeSet, (done, _total, bytes) => {
      chunksDone = done;
      wakeBytes = bytes;
      emit({ state: 'downloading', reason, chunksDone: done, bytesDone: bytes, ...total });
    });
    // The pristine state matches the image's disk byte for byte, hence one generation for both.
    // Fetched beside the chunks: on a slow line the two share it, and neither waits for the other.
    let chunksMs = 0;
    const [, stateBytes_] = await Promise.all([chunks.then(() => (chunksMs = performance.now() - started)), fetchPristineState(manifest, baseUrl, { fetch: imageFetch })]);
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
    emit({ state: 'downloading', reason, chunksDone: total.chunksTotal, bytesDone: total.bytesTotal, ...total });
    target.writeMeta({ ...target.readMeta(), imageHash: manifest.recipeHash });
    return overlay;
  }

  // The image's chunks: one store per worker and image, shared through OPFS with every stack.
  let baseChunks: BaseChunks | null = null;
  let baseChunksUrl = '';
  const availabilityListeners = new Set<(availability: VmAvailability) => void>();
  let availability: VmAvailability | null = null;
  let downloading: Promise<void> | null = null;
  let downloadAbort: AbortController | null = null;
  let availabilityToldAt = 0;
  const setAvailability = (next: VmAvailability) => {
    availability = next;
    // At most twice a second while chunks stream in (each crosses to the stack worker).
    const now = Date.now();
    if (next.state === 'downloading' && now - availabilityToldAt < 500) return;
    availabilityToldAt = now;
    for (const listener of availabilityListeners) listener(next);
  };

  async function baseFor(manifest: ImageManifest, baseUrl: string): Promise<BaseChunks> {
    if (baseChunks?.manifest.recipeHash === manifest.recipeHash && baseChunksUrl === baseUrl) return baseChunks;
    // A stored image's chunks stay in its own folder; a served image's are shared by every stack.
    const chunkFiles = isStoredImageUrl(baseUrl)
      ? packedChunkFiles(manifest, (await storedImageFile(deps.storageRoot, joinUrl(baseUrl, DISK_PACK))) ?? new File([], DISK_PACK))
      : opfsChunkFiles(await openBaseDir(await deps.storageRoot()));
    baseChunksUrl = baseUrl;
    baseChunks = new BaseChunks(manifest, baseUrl, chunkFiles, {
      fetch: imageFetch,
      onWaiting: (reason) => {
        if (!reason) return;
        const bytes = new TextEncoder().encode(`\r\n\x1b[33m[computer] ${reason}\x1b[0m\r\n`);
        terminalListeners.forEach((listener) => listener(bytes));
        recentNotices.push({ n: ++noticeCount, line: reason });
      },
    });
    return baseChunks;
  }

  /**
   * Fetches the rest of the image into this browser, two chunks at a time, so the computer works
   * offline; progress goes to availability listeners. Stops quietly offline (tried again at the
   * next start) and says so when storage is full.
   */
  function downloadRest(base: BaseChunks): Promise<void> {
    if (downloading) return downloading;
    downloadAbort = new AbortController();
    const progress = (p: BaseProgress, state: VmAvailability['state'], error?: string) =>
      setAvailability({ state, ...p, ...(error ? { error } : {}) });
    // The user's work first: the download waits while a command runs, the terminal is in use
    // (typed into or printing), or the guest reads its disk, e.g. a silent command in the
    // terminal (its chunks, hashed and stored, take time from the emulator in this same worker,
    // and the guest's own fetches queue beside them: a first `import pandas` took 150-180 s
    // beside the download).
    // It also waits a moment after a start: a first command, which reads what it needs at once,
    // has the connection to itself.
    const pace = async () => {
      const busy = () =>
        activeExecs > 0 || Date.now() - lastTerminalUse < 3000 || Date.now() - base.lastWaitedAt < 3000 || Date.now() - startedAt < 10_000;
      while (busy()) await new Promise((resolve) => setTimeout(resolve, 500));
    };
    downloading = base
      .downloadAll((p) => progress(p, p.chunksDone === p.chunksTotal ? 'complete' : 'downloading'), downloadAbort.signal, pace)
      .then((p) => progress(p, 'complete'))
      .catch(async (error: unknown) => {
        const p = await base.progress();
        if (downloadAbort?.signal.aborted) return progress(p, 'paused');
        progress(p, 'paused', toVmError(error).message);
      })
      .finally(() => {
        downloading = null;
      });
    return downloading;
  }

  const api: VmApi = {
    async start(options, onStatus) {
      if (onStatus) statusListeners.add(onStatus);
      return guard(async () => {
        if (opened && opened.options.stackId !== options.stackId) {
          throw new MachineError('not_running', `this computer belongs to stack ${opened.options.stackId}: use one VM worker per stack`);
        }
        if (machine && status.state === 'ready') return 'woke' as const; // already running
        await machine?.shutdown(); // e.g. after a watchdog error: never two emulators
        machine = await prepare(options, null);
        const how = await machine.start();
        startedAt = Date.now();
        startFlushing();
        if (baseChunks) void downloadRest(baseChunks);
        return how;
      });
    },
    async makeAvailableOffline(imageBaseUrl) {
      return guard(async () => {
        const base = await baseFor(await fetchManifest(imageBaseUrl, imageFetch), imageBaseUrl);
        await downloadRest(base);
        return availability ?? { state: 'complete' as const, ...(await base.progress()) };
      });
    },
    async subscribeAvailability(listener) {
      availabilityListeners.add(listener);
      if (availability) listener(availability);
    },
    async subscribeStatus(listener) {
      statusListeners.add(listener);
      listener(status);
    },
    async exec(id, request, onOutput, options) {
      // Stdin written before the guest has the exec would be refused there: writes wait for it.
      let sent = () => {};
      execsSent.set(id, new Promise<void>((resolve) => (sent = resolve)));
      runningExecs++;
      const result = await guard(async () => {
        if (!machine) throw new MachineError('not_running', 'the computer is not running');
        // A command sees every file the stack worker wrote before asking for it (a hook after a write).
        await hostChanges;
        await checkpointing; // a checkpoint pauses the machine for a moment
        const streams = onOutput ? { onStdout: (b: Uint8Array) => onOutput('stdout', b), onStderr: (b: Uint8Array) => onOutput('stderr', b) } : {};
        if (options?.background) {
          // A server runs for as long as the stack is open. Its start is work like a command's
          // (saves, the image download and /workspace flushes wait); once it first answers, or
          // after a minute, the machine saves and rests around it.
          activeExecs++;
          let starting = true;
          const answered = () => {
            if (!starting) return;
            starting = false;
            activeExecs--;
            scheduleCheckpoint();
          };
          const timer = setTimeout(answered, 60_000);
          const running = machine.exec(request, {
            id,
            collect: false,
            onStdout: (b: Uint8Array) => {
              answered();
              onOutput?.('stdout', b);
            },
            onStderr: (b: Uint8Array) => onOutput?.('stderr', b),
          });
          sent(); // machine.exec hands the exec to the guest before it first awaits
          try {
            return await running;
          } finally {
            clearTimeout(timer);
            answered();
          }
        }
        activeExecs++;
        const noticesBefore = noticeCount;
        try {
          const running = machine.exec(request, { id, ...streams });
          sent();
          const result = await running;
          const network = noticesSince(noticesBefore);
          return { ...result, ...(network.length ? { network } : {}) };
        } finally {
          activeExecs--;
          scheduleCheckpoint();
        }
      }).finally(() => runningExecs--);
      sent();
      execsSent.delete(id);
      return result;
    },
    async cancel(id, signal) {
      machine?.agent?.cancel(id, signal);
    },
    async writeStdin(id, bytes, eof) {
      await execsSent.get(id);
      machine?.agent?.writeStdin(id, bytes, eof);
    },
    async suspend() {
      return guard(async () => {
        if (!machine) throw new MachineError('not_running', 'the computer is not running');
        stopTimers();
        await checkpointing;
        // No command running, and the last save written beside its disk: if nothing happened since
        // (the machine knows: a command, a keystroke, terminal output, a disk write), it stops as saved.
        const current = machine;
        const began = performance.now();
        let asSaved = false;
        await current.suspend(() => {
          const meta = files?.readMeta();
          return (asSaved = runningExecs === 0 && !!meta?.state && meta.state === meta.disk);
        });
        const phases = !asSaved && current.lastSave ? `: sync ${Math.round(current.lastSave.syncMs)}, stop ${Math.round(current.lastSave.stopMs)}, save_state ${Math.round(current.lastSave.saveStateMs)} ms` : '';
        console.info(`computer suspended in ${Math.round(performance.now() - began)} ms (${asSaved ? 'as it was saved last, nothing having happened since' : 'saved'}${phases})`);
      });
    },
    async rest() {
      const idle = () => machine !== null && status.state === 'ready' && runningExecs === 0;
      // A job the user left running in the terminal goes on (a download, a long script); a command
      // may come while the guest is asked.
      if (!idle() || (await machine!.terminalBusy()) || !idle()) return { ok: true, value: false };
      const suspended = await api.suspend();
      return suspended.ok ? { ok: true, value: true } : suspended;
    },
    async checkpoint(onlyIfChanged) {
      return guard(async () => {
        if (!machine) throw new MachineError('not_running', 'the computer is not running');
        if (onlyIfChanged && !checkpointTimer) return; // saved since the last activity, or saving now
        if (checkpointTimer) clearTimeout(checkpointTimer);
        checkpointTimer = null;
        await checkpointing;
        lastCheckpoint = Date.now();
        await machine.checkpoint();
      });
    },
    async capture(since) {
      // Moved, not copied (the state is 60-70 MB): what is sent back is the guard's result, so
      // that is what is marked for transfer.
      let moved: Transferable[] = [];
      const outcome = await guard(async () => {
        const current = files;
        const overlay = overlayInUse;
        if (!current || !overlay) return null;
        const asked = performance.now();
        // A quiet-time save under way: once its state is taken, with nothing happened since (no
        // command, no keystroke, no disk write: none put a save off), that state is this capture's
        // while it is still written. Otherwise it ends first: a save for this capture must not
        // race its write.
        const quiet = quietSave;
        if (quiet) await quiet.taken;
        const inFlight = quiet?.state && checkpointing && checkpointTimer === null ? quiet.state : null;
        if (!inFlight) await checkpointing;
        const continues = since !== null && lastCapture?.token === since && lastCapture.overlay === overlay;
        let copied: Omit<VmCapture, 'state' | 'stateUnchanged' | 'meta' | 'token' | 'journal' | 'handled'> | null = null;
        let saved: { generation: string; state: ArrayBuffer } | null = null;
        const copy = (generation?: string, state?: ArrayBuffer) => {
          if (generation && state) saved = { generation, state };
          overlay.flush();
          const changed = overlay.takeChanges();
          const dataSize = current.overlay.data.size;
          const map = new Uint8Array(current.overlay.map.size);
          current.overlay.map.read(map, 0);
          const count = Math.ceil(dataSize / CHANGE_CHUNK);
          const chunks: VmCapture['chunks'] = [];
          for (let index = 0; index < count; index++) {
            if (continues && !changed.has(index)) continue;
            const bytes = new Uint8Array(Math.min(CHANGE_CHUNK, dataSize - index * CHANGE_CHUNK));
            current.overlay.data.read(bytes, index * CHANGE_CHUNK);
            chunks.push({ index, bytes });
          }
          copied = { map, dataSize, full: !continues, chunks };
        };
        const began = performance.now();
        // The stored meta names the last state written; the one being written is as good.
        const meta = inFlight ? { ...current.readMeta(), state: inFlight.generation, disk: inFlight.generation } : current.readMeta();
        const activity = checkpointTimer !== null;
        if (machine && status.state === 'ready' && (activity || meta.disk !== meta.state || meta.state === null)) {
          // Something ran since the last save (or the disk moved on): save now, copy the disk while stopped.
          if (checkpointTimer) clearTimeout(checkpointTimer);
          checkpointTimer = null;
          lastCheckpoint = Date.now();
          // The capture is done once the guest runs on; the state is written to storage meanwhile.
          let ranOn = () => {};
          const running = new Promise<void>((resolve) => (ranOn = resolve));
          const saving = machine.checkpoint(copy, ranOn);
          // Cleared once written, as the quiet-time save's: the next quiet-time save and /workspace flush wait only while it runs.
          checkpointing = saving.catch((error: unknown) => console.warn('the computer was captured, but its state could not be written for a wake', error)).finally(() => (checkpointing = null));
          await Promise.race([running, saving]);
        } else {
          // Stopped, or nothing ran since the last save: the files stand still enough (a disk
          // write after this copy would mark the state stale, which the meta below records).
          if (inFlight) copy(inFlight.generation, inFlight.state);
          else copy();
        }
        // A state saved for this capture matches the disk copied with it, whatever its writing does.
        const recorded = current.readMeta();
        const fresh = saved as { generation: string; state: ArrayBuffer } | null;
        const after = fresh ? { ...recorded, state: fresh.generation, disk: fresh.generation } : recorded;
        const valid = after.state !== null && after.state === after.disk;
        const stateUnchanged = valid && continues && lastCapture!.generation === after.state;
        // A copy of a fresh state: the original is still being written.
        const state = valid && !stateUnchanged ? (fresh ? fresh.state.slice(0) : await current.store.readState()) : null;
        const journal = fresh && savedJournal?.generation === fresh.generation ? new TextEncoder().encode(JSON.stringify(savedJournal)) : null;
        const token = crypto.randomUUID();
        const phases = fresh && machine?.lastSave ? `: sync ${Math.round(machine.lastSave.syncMs)}, stop ${Math.round(machine.lastSave.stopMs)}, save_state ${Math.round(machine.lastSave.saveStateMs)} ms` : '';
        const waited = began - asked > 5 ? ` after waiting ${Math.round(began - asked)} ms for a save under way` : '';
        const asTaken = inFlight ? ', the state of the save being written' : '';
        const detail = `${Math.round(performance.now() - began)} ms${waited} (${fresh && !inFlight ? 'saved for it' : 'as last saved'}${asTaken}; ${copied!.chunks.length} disk chunks${state ? `, state ${(state.byteLength / 1e6).toFixed(1)} MB` : ''}${phases})`;
        console.info(`computer captured in ${detail}`);
        lastCapture = { token, overlay, generation: valid ? after.state : null };
        const result: VmCapture = { token, meta: valid ? after : { ...after, state: null, disk: null }, state: state && new Uint8Array(state), stateUnchanged, journal, ...copied!, handled: { from: performance.timeOrigin + asked, to: performance.timeOrigin + performance.now(), detail } };
        moved = [...(state ? [state] : []), ...(journal ? [journal.buffer] : []), result.map.buffer, ...result.chunks.map((chunk) => chunk.bytes.buffer)];
        return result;
      });
      return Comlink.transfer(outcome, moved);
    },
    async workspaceChanged(path) {
      // Recorded before its first await: an exec asked after it (in message order) waits for it.
      const change = hostChanges.then(() => machine?.workspaceChanged(path));
      hostChanges = change.catch(() => {});
      return guard(async () => {
        await change;
      });
    },
    async networkTraffic() {
      return traffic.totals();
    },
    async setNetwork(network, offline) {
      link.set(network, offline);
    },
    async terminalInput(bytes) {
      lastTerminalUse = Date.now();
      machine?.sendSerial(bytes);
      scheduleCheckpoint();
    },
    async terminalResize(cols, rows) {
      if (status.state !== 'ready') return;
      // Not a use of the guest: the page sends the size again whenever the computer comes up.
      await machine?.agent?.resize(rows, cols, '/dev/ttyS0').catch(() => {});
    },
    async subscribeTerminal(listener) {
      terminalListeners.add(listener);
    },
    async reset() {
      return guard(async () => {
        if (!opened) throw new MachineError('not_running', 'the computer was never started');
        stopTimers();
        await machine?.shutdown();
        machine = await prepare(opened.options, 'reset');
        const how = await machine.start();
        startFlushing();
        return how;
      });
    },
    async reboot() {
      return guard(async () => {
        if (!opened) throw new MachineError('not_running', 'the computer was never started');
        stopTimers();
        await machine?.shutdown();
        machine = await prepare(opened.options, null);
        await machine.coldBoot();
        startFlushing();
        return 'booted' as const;
      });
    },
    async shutdown() {
      stopTimers();
      downloadAbort?.abort();
      await machine?.shutdown();
      machine = null;
    },
  };
  return api;
}

/** Runs a synchronous write to the machine's files, naming a full storage as such. */
function guardStorage<T>(run: () => T): T {
  try {
    return run();
  } catch (cause) {
    if (cause instanceof Error && cause.name === 'QuotaExceededError') {
      throw new ImageError('quota', "the browser's storage is full: the computer's disk does not fit", { cause });
    }
    throw cause;
  }
}

/** Runs an operation, turning any failure into a plain VmError. Never rejects. */
async function guard<T>(run: () => Promise<T>): Promise<VmResult<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, error: toVmError(error) };
  }
}

export function toVmError(error: unknown): VmError {
  if (error instanceof ImageError && error.code === 'fetch_failed') {
    // Said without the file's address: what is missing, why, and what to do.
    return { code: 'image_fetch_failed', message: `part of its system image is not in this browser yet and could not be fetched (${whyNotFetched(error)}); connect to the internet and start it again`, retryable: true };
  }
  if (error instanceof ImageError) return { code: `image_${error.code}`, message: error.message, retryable: false };
  if (error instanceof MachineError) return { code: error.code, message: error.message, retryable: error.code !== 'not_running' };
  if (error instanceof AgentError) return { code: error.code, message: error.message, retryable: error.code === 'agent_restarted' };
  if (error instanceof Error && error.name === 'QuotaExceededError') return { code: 'image_quota', message: "the browser's storage is full", retryable: false };
  return { code: 'internal', message: error instanceof Error ? error.message : String(error) };
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

declare const WorkerGlobalScope: unknown;
if (typeof WorkerGlobalScope !== 'undefined') {
  // What the worker's Content-Security-Policy refuses is said where the page's console shows it
  // (the browser's own report stays in the worker's, which tests and bug reports do not see).
  self.addEventListener('securitypolicyviolation', (event) => console.error(`Content Security Policy: the worker ${self.name || self.location.pathname} was refused ${event.effectiveDirective} ${event.blockedURI || '(inline)'}`));
  // Compiling v86 (~2 MB of wasm) starts now, beside the stack's setup, not on the wake's path.
  const wasmModule = WebAssembly.compileStreaming(fetch(wasmUrl));
  wasmModule.catch(() => {}); // reported, if ever, by the fallback in instantiateFrom
  Comlink.expose(createVmApi({ storageRoot: () => navigator.storage.getDirectory(), wasmModule }));
}
