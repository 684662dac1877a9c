// The VM worker's entry (a dedicated worker): exposes VmApi over comlink, owns the stack's
// machine files in OPFS and the one Machine running in this worker.
import * as Comlink from 'comlink';
import wasmUrl from 'v86/build/v86.wasm?url';
import { AgentError } from './agent-client.ts';
import { SyncFileDisk } from './disk.ts';
import { fetchImageFile, fetchManifest, fetchPristineState, fillDisk, ImageError, type ImageManifest } from './image.ts';
import { Machine, MachineError, type EmulatorLike, type MachineBootFiles, type MachineOptions } from './machine.ts';
import { openOpfsMachine, type OpfsMachineFiles } from './opfs-store.ts';
import { opfsWorkspaceStore, readJournal, writeJournal } from './opfs-workspace.ts';
import { WorkspaceMirror, type Fs9pLike } from './workspace.ts';
import { installDnsBridge, type DnsNotice } from './network.ts';
import { createTrafficCounter } from './traffic.ts';
import type { FillReason, VmApi, VmError, VmResult, VmStartOptions, VmStatus } from './protocol.ts';

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
  /** How often guest changes under /workspace reach OPFS while nothing runs (ms). */
  workspaceFlushMs?: number;
  /** Quiet time after which the machine is suspended to free the CPU and memory (ms; 0: never). */
  suspendAfterMs?: number;
  /** Whose `fetch` v86 calls for DNS (the worker's global scope); the bridge to the proxy's resolver wraps it. */
  dnsScope?: { fetch: typeof fetch };
}

/** Builds the VmApi; exported for tests, exposed by this module when run as a worker. */
export function createVmApi(deps: VmWorkerDeps): VmApi {
  const statusListeners = new Set<(status: VmStatus) => void>();
  const terminalListeners = new Set<(bytes: Uint8Array) => void>();
  let status: VmStatus = { state: 'off' };
  let machine: Machine | null = null;
  let files: OpfsMachineFiles | null = null;
  let opened: { options: VmStartOptions; manifest: ImageManifest; boot: MachineBootFiles } | null = null;
  let mirror: WorkspaceMirror | null = null;
  /** The generation of the state being woken from (the journal is trusted only for it). */
  let wokeGeneration: string | null = null;
  let activeExecs = 0;
  let checkpointTimer: ReturnType<typeof setTimeout> | null = null;
  let flushTimer: ReturnType<typeof setInterval> | null = null;
  let checkpointing: Promise<unknown> | null = null;
  let idleTimer: ReturnType<typeof setTimeout> | null = null;

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
  const setNetwork = installDnsBridge(deps.dnsScope ?? globalThis, notify);
  const traffic = createTrafficCounter();
  const noticesSince = (n: number) => [...new Set(recentNotices.filter((notice) => notice.n > n).map((notice) => notice.line))];

  let lastCheckpoint = 0;
  /**
   * After activity: once the machine has been quiet for a while, save it where it stands (at
   * most every 15 s: a save writes ~100 MB), so a reload or a killed tab still wakes in a second.
   */
  const scheduleCheckpoint = () => {
    const quiet = deps.checkpointAfterMs ?? 4000;
    const after = quiet && Math.max(quiet, lastCheckpoint + 15_000 - Date.now());
    if (checkpointTimer) clearTimeout(checkpointTimer);
    checkpointTimer = null;
    scheduleIdleSuspend();
    if (!after) return;
    checkpointTimer = setTimeout(() => {
      checkpointTimer = null;
      if (!machine || activeExecs > 0 || status.state !== 'ready' || checkpointing) return;
      const current = machine;
      lastCheckpoint = Date.now();
      checkpointing = current
        .checkpoint()
        .catch((error: unknown) => console.warn('checkpoint failed', error))
        .finally(() => (checkpointing = null));
    }, after);
  };

  /** Long quiet: suspend (the next exec or keystroke wakes it in about a second). */
  const scheduleIdleSuspend = () => {
    const after = deps.suspendAfterMs ?? 15 * 60_000;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (!after) return;
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (machine && activeExecs === 0 && status.state === 'ready') void api.suspend();
    }, after);
  };

  const startFlushing = () => {
    scheduleIdleSuspend();
    if (flushTimer) return;
    flushTimer = setInterval(() => {
      if (mirror?.pending && activeExecs === 0 && !checkpointing) mirror.flush().catch(() => {});
    }, deps.workspaceFlushMs ?? 1000);
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
    status = next;
    for (const listener of statusListeners) listener(next);
  };

  async function prepare(options: VmStartOptions, forceFill: FillReason | null): Promise<Machine> {
    const manifest = await fetchManifest(options.imageBaseUrl, deps.fetch);
    const fetchFile = (role: 'bios' | 'vgaBios' | 'kernel' | 'initrd') => fetchImageFile(manifest, options.imageBaseUrl, role, { fetch: deps.fetch });
    const [bios, vgaBios] = await Promise.all([fetchFile('bios'), fetchFile('vgaBios')]);
    // The kernel and initrd (7.5 MB, checksummed) only for a cold boot: a wake never reads them.
    const kernel = async () => {
      const [k, i] = await Promise.all([fetchFile('kernel'), fetchFile('initrd')]);
      return { kernel: k, initrd: i };
    };
    const boot: MachineBootFiles = { bios, vgaBios, kernel, cmdline: manifest.cmdline, memoryMiB: manifest.memoryMiB, agentPort: manifest.agent.virtioConsolePort };
    files ??= await openOpfsMachine(await deps.storageRoot(), options.stackId);
    const meta = files.readMeta();
    const reason: FillReason | null =
      forceFill ?? (meta.imageHash === null ? (files.disk.size > 0 ? 'incomplete' : 'first_start') : meta.imageHash !== manifest.recipeHash ? 'image_changed' : null);
    if (reason) await fill(files, manifest, options.imageBaseUrl, reason);
    opened = { options, manifest, boot };
    const machineFiles = files;
    mirror = new WorkspaceMirror(opfsWorkspaceStore(machineFiles.stackDir));
    const next = new Machine({
      files: boot,
      disk: new SyncFileDisk(machineFiles.disk, manifest.disk.size),
      store: machineFiles.store,
      wasmPath: deps.wasmPath ?? wasmUrl,
      ...(deps.wasmModule ? { wasmFn: instantiateFrom(deps.wasmModule) } : {}),
      ...(deps.createEmulator ? { createEmulator: deps.createEmulator } : {}),
      hooks: workspaceHooks(machineFiles),
      network: options.network ?? null,
      // Only frames that have the proxy's relay behind them: offline, the card sends into nothing.
      ...(options.network ? { traffic } : { offline: { reason: `the computer is offline (${options.offline ?? 'it has no network'})`, onNotice: notify } }),
    });
    setNetwork(options.network ?? null);
    next.onStatus((s) => emit(s));
    next.onSerial((bytes) => terminalListeners.forEach((l) => l(bytes)));
    return next;
  }

  /** Keeps /workspace (the 9p FS) and OPFS in step across boots, wakes and saves. */
  function workspaceHooks(machineFiles: OpfsMachineFiles): MachineOptions['hooks'] {
    return {
      started: async (emulator: EmulatorLike, how) => {
        if (!mirror || !emulator.fs9p) return;
        mirror.attach(emulator.fs9p as Fs9pLike);
        const journal = how === 'woke' ? await readJournal(machineFiles.vmDir) : null;
        await mirror.reconcile(journal, wokeGeneration);
      },
      beforeSave: async () => {
        await mirror?.flush();
      },
      saved: async (generation) => {
        if (mirror) await writeJournal(machineFiles.vmDir, mirror.snapshotJournal(generation));
      },
    };
  }

  async function fill(target: OpfsMachineFiles, manifest: ImageManifest, baseUrl: string, reason: FillReason): Promise<void> {
    // Mark incomplete first: a fill cut short (quota, closed tab) never looks like a valid disk.
    target.writeMeta({ imageHash: null, state: null, disk: null });
    await target.store.clearState();
    // The saved state is part of the download: progress counts its bytes too.
    const stateBytes = manifest.pristineState?.compressedSize ?? 0;
    let last = { chunksDone: 0, chunksTotal: manifest.disk.chunks.length + (stateBytes ? 1 : 0), bytesDone: 0, bytesTotal: 0 };
    try {
      await fillDisk(manifest, baseUrl, target.disk, {
        fetch: deps.fetch,
        onProgress: (p) => {
          last = { chunksDone: p.chunksDone, chunksTotal: p.chunksTotal + (stateBytes ? 1 : 0), bytesDone: p.bytesDone, bytesTotal: p.bytesTotal + stateBytes };
          emit({ state: 'downloading', reason, ...last });
        },
      });
    } catch (error) {
      try {
        target.disk.truncate(0);
      } catch {
        // the storage is already failing; the meta says incomplete either way
      }
      throw error;
    }
    target.writeMeta({ imageHash: manifest.recipeHash, state: null, disk: null });
    // The pristine post-boot state built with the image: the first start wakes instead of
    // booting. It matches the freshly filled disk byte for byte, hence one generation for both.
    const state = await fetchPristineState(manifest, baseUrl, { fetch: deps.fetch });
    if (state) {
      await target.store.writeState(state, `pristine-${manifest.recipeHash}`);
      emit({ state: 'downloading', reason, chunksDone: last.chunksTotal, chunksTotal: last.chunksTotal, bytesDone: last.bytesTotal, bytesTotal: last.bytesTotal });
    }
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
        wokeGeneration = (await files!.store.readGeneration()).state;
        const how = await machine.start();
        startFlushing();
        return how;
      });
    },
    async subscribeStatus(listener) {
      statusListeners.add(listener);
      listener(status);
    },
    async exec(id, request, onOutput) {
      return guard(async () => {
        if (!machine) throw new MachineError('not_running', 'the computer is not running');
        await checkpointing; // a checkpoint pauses the machine for a moment
        activeExecs++;
        const noticesBefore = noticeCount;
        try {
          const result = await machine.exec(request, {
            id,
            ...(onOutput ? { onStdout: (b: Uint8Array) => onOutput('stdout', b), onStderr: (b: Uint8Array) => onOutput('stderr', b) } : {}),
          });
          // What the command wrote under /workspace is in OPFS before the caller hears back.
          let warning: string | undefined;
          try {
            await mirror?.flush();
          } catch (error) {
            warning = `files the command wrote under /workspace could not be saved: ${toVmError(error).message}`;
          }
          const network = noticesSince(noticesBefore);
          return { ...result, ...(warning ? { warning } : {}), ...(network.length ? { network } : {}) };
        } finally {
          activeExecs--;
          scheduleCheckpoint();
        }
      });
    },
    async cancel(id, signal) {
      machine?.agent?.cancel(id, signal);
    },
    async writeStdin(id, bytes, eof) {
      machine?.agent?.writeStdin(id, bytes, eof);
    },
    async suspend() {
      return guard(async () => {
        if (!machine) throw new MachineError('not_running', 'the computer is not running');
        stopTimers();
        await checkpointing;
        await machine.suspend();
        mirror?.detach();
      });
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
    async workspaceChanged(path) {
      return guard(async () => {
        await mirror?.hostChanged(path);
      });
    },
    async networkTraffic() {
      return traffic.totals();
    },
    async terminalInput(bytes) {
      machine?.sendSerial(bytes);
      scheduleCheckpoint();
    },
    async terminalResize(cols, rows) {
      if (status.state !== 'ready') return;
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
        wokeGeneration = (await files!.store.readGeneration()).state;
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
        wokeGeneration = null;
        await machine.coldBoot();
        startFlushing();
        return 'booted' as const;
      });
    },
    async shutdown() {
      stopTimers();
      await mirror?.flush().catch(() => {});
      await machine?.shutdown();
      machine = null;
    },
  };
  return api;
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
  if (error instanceof ImageError) return { code: `image_${error.code}`, message: error.message, retryable: error.code === 'fetch_failed' };
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
  // Compiling v86 (~2 MB of wasm) starts now, beside the stack's setup, not on the wake's path.
  const wasmModule = WebAssembly.compileStreaming(fetch(wasmUrl));
  wasmModule.catch(() => {}); // reported, if ever, by the fallback in instantiateFrom
  Comlink.expose(createVmApi({ storageRoot: () => navigator.storage.getDirectory(), wasmModule }));
}
