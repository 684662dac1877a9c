// The VM worker's entry (a dedicated worker): exposes VmApi over comlink, owns the stack's
// machine files in OPFS and the one Machine running in this worker.
import * as Comlink from 'comlink';
import wasmUrl from 'v86/build/v86.wasm?url';
import { AgentError } from './agent-client.ts';
import { SyncFileDisk } from './disk.ts';
import { fetchImageFile, fetchManifest, fillDisk, ImageError, type ImageManifest } from './image.ts';
import { Machine, MachineError, type MachineBootFiles, type MachineOptions } from './machine.ts';
import { openOpfsMachine, type OpfsMachineFiles } from './opfs-store.ts';
import type { FillReason, VmApi, VmError, VmResult, VmStartOptions, VmStatus } from './protocol.ts';

export interface VmWorkerDeps {
  storageRoot: () => Promise<FileSystemDirectoryHandle>;
  fetch?: typeof fetch;
  wasmPath?: string;
  /** Replaces v86 (tests). */
  createEmulator?: MachineOptions['createEmulator'];
}

/** Builds the VmApi; exported for tests, exposed by this module when run as a worker. */
export function createVmApi(deps: VmWorkerDeps): VmApi {
  const statusListeners = new Set<(status: VmStatus) => void>();
  const terminalListeners = new Set<(bytes: Uint8Array) => void>();
  let status: VmStatus = { state: 'off' };
  let machine: Machine | null = null;
  let files: OpfsMachineFiles | null = null;
  let opened: { options: VmStartOptions; manifest: ImageManifest; boot: MachineBootFiles } | null = null;

  const emit = (next: VmStatus) => {
    status = next;
    for (const listener of statusListeners) listener(next);
  };

  async function prepare(options: VmStartOptions, forceFill: FillReason | null): Promise<Machine> {
    const manifest = await fetchManifest(options.imageBaseUrl, deps.fetch);
    const roles = ['bios', 'vgaBios', 'kernel', 'initrd'] as const;
    const [bios, vgaBios, kernel, initrd] = await Promise.all(roles.map((r) => fetchImageFile(manifest, options.imageBaseUrl, r, { fetch: deps.fetch })));
    const boot: MachineBootFiles = { bios: bios!, vgaBios: vgaBios!, kernel: kernel!, initrd: initrd!, cmdline: manifest.cmdline, memoryMiB: manifest.memoryMiB, agentPort: manifest.agent.virtioConsolePort };
    files ??= await openOpfsMachine(await deps.storageRoot(), options.stackId);
    const meta = files.readMeta();
    const reason: FillReason | null =
      forceFill ?? (meta.imageHash === null ? (files.disk.size > 0 ? 'incomplete' : 'first_start') : meta.imageHash !== manifest.recipeHash ? 'image_changed' : null);
    if (reason) await fill(files, manifest, options.imageBaseUrl, reason);
    opened = { options, manifest, boot };
    const next = new Machine({ files: boot, disk: new SyncFileDisk(files.disk, manifest.disk.size), store: files.store, wasmPath: deps.wasmPath ?? wasmUrl, ...(deps.createEmulator ? { createEmulator: deps.createEmulator } : {}) });
    next.onStatus((s) => emit(s));
    next.onSerial((bytes) => terminalListeners.forEach((l) => l(bytes)));
    return next;
  }

  async function fill(target: OpfsMachineFiles, manifest: ImageManifest, baseUrl: string, reason: FillReason): Promise<void> {
    // Mark incomplete first: a fill cut short (quota, closed tab) never looks like a valid disk.
    target.writeMeta({ imageHash: null, state: null, disk: null });
    await target.store.clearState();
    try {
      await fillDisk(manifest, baseUrl, target.disk, {
        fetch: deps.fetch,
        onProgress: (p) => emit({ state: 'downloading', reason, ...p }),
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
        return machine.start();
      });
    },
    async subscribeStatus(listener) {
      statusListeners.add(listener);
      listener(status);
    },
    async exec(id, request, onOutput) {
      return guard(async () => {
        if (!machine) throw new MachineError('not_running', 'the computer is not running');
        return machine.exec(request, {
          id,
          ...(onOutput ? { onStdout: (b: Uint8Array) => onOutput('stdout', b), onStderr: (b: Uint8Array) => onOutput('stderr', b) } : {}),
        });
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
        await machine.suspend();
      });
    },
    async terminalInput(bytes) {
      machine?.sendSerial(bytes);
    },
    async subscribeTerminal(listener) {
      terminalListeners.add(listener);
    },
    async reset() {
      return guard(async () => {
        if (!opened) throw new MachineError('not_running', 'the computer was never started');
        await machine?.shutdown();
        machine = await prepare(opened.options, 'reset');
        await machine.coldBoot();
        return 'booted' as const;
      });
    },
    async shutdown() {
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

declare const WorkerGlobalScope: unknown;
if (typeof WorkerGlobalScope !== 'undefined') {
  Comlink.expose(createVmApi({ storageRoot: () => navigator.storage.getDirectory() }));
}
