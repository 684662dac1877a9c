// The stack's computer as the stack worker sees it: the VM worker (vm/) behind VmApi, its status
// as ComputerStatus events, exec for the bash tool, the terminal, and /workspace kept in step
// with the files the stack worker writes.
import type { ExecRequest, NetTraffic, VmApi, VmAvailability, VmCapture, VmExecResult, VmNetwork, VmStatus } from '../vm/protocol.ts';
import type { ComputerAction, ComputerStatus } from '../protocol/computer.ts';

/** The computer's network: the proxy's relay and resolver, or why it has none. */
export type ComputerNetwork = { network: VmNetwork } | { network: null; offline: string };

export type { ExecRequest } from '../vm/protocol.ts';

export interface ComputerDeps {
  /** The VM worker's API (a comlink remote), made on first use; null when this build has no image. */
  connect: (() => VmApi) | null;
  /**
   * Ends the VM worker behind an API connect() made: a stopped emulator's memory (hundreds of MB)
   * is only given back with its worker. The next use connects again.
   */
  disconnect?: (vm: VmApi) => void;
  /** Where the image is served, e.g. `/vm/39984eec6bc63029/`. */
  imageBaseUrl: string | null;
  /**
   * The image this stack's computer runs on when it is not the app's: one kept in this browser
   * (vm/stored-image.ts), brought by a stack file that included it. Asked at each start.
   */
  storedImage?: () => Promise<string | null>;
  stackId: string;
  emit(status: ComputerStatus): void;
  /** The proxy's relay and resolver for the guest, asked at each start and change; or why it has none. */
  network?: () => Promise<ComputerNetwork>;
  /** Wraps a callback that crosses into the VM worker (Comlink.proxy; identity in tests). */
  proxy<T extends object>(callback: T): T;
  now?: () => number;
}

/** How long a checkpoint waits for the computer to finish starting before it is given up. */
const CAPTURE_START_WAIT_MS = 20_000;
/** How long a start that answered waits for the computer's "ready" to arrive by its own port. */
const STATUS_AFTER_START_MS = 5_000;

export class ComputerUnavailableError extends Error {
  override readonly name = 'ComputerUnavailableError';
}

export interface Computer {
  readonly status: ComputerStatus;
  /** Starts (or wakes) the computer; resolves with the status it reached. Never rejects. */
  start(): Promise<ComputerStatus>;
  /**
   * `save`: saves the state now if it changed since the last save (the page is being hidden).
   * `download`: fetches the rest of the system image so the computer works offline (not started).
   */
  control(action: ComputerAction): Promise<ComputerStatus>;
  /**
   * Runs a program, starting the computer first when needed. Throws ComputerUnavailableError
   * when there is no computer or it cannot start; a failed run is a result, not a throw.
   */
  exec(request: ExecRequest, options?: { signal?: AbortSignal; onOutput?: (stream: 'stdout' | 'stderr', text: string) => void }): Promise<VmExecResult>;
  /**
   * Starts a long-lived process (a server) whose stdin stays open, starting the computer first
   * when needed: its output is streamed, never kept, and it does not hold off the machine's saves
   * or rest. `exited` resolves when it ends, however it ends (never rejects). Throws
   * ComputerUnavailableError when there is no computer or it cannot start.
   */
  service(request: ExecRequest, options: { signal: AbortSignal; onOutput: (stream: 'stdout' | 'stderr', text: string) => void }): Promise<ComputerService>;
  /** The stack worker wrote or removed `path` in user space: show it under /workspace. */
  workspaceChanged(path: string): void;
  subscribeTerminal(listener: (bytes: Uint8Array) => void): Promise<void>;
  terminalInput(bytes: Uint8Array): Promise<void>;
  terminalResize(cols: number, rows: number): Promise<void>;
  /**
   * The network card's traffic since the page opened (nothing before the computer first starts),
   * and `online`: whether the running computer has a network (null when not running).
   */
  networkUse(): Promise<NetTraffic & { online: boolean | null }>;
  /**
   * The stack's network may have changed (Settings, pairing): a running computer takes it at
   * once, its open connections ending; a stopped one takes it at its next start anyway.
   */
  networkChanged(): Promise<void>;
  /**
   * The computer's files as they stand, for a checkpoint (VmApi.capture): null when it was not
   * started since the page opened (its files in OPFS are then still). Throws when saving fails.
   */
  capture(since: string | null): Promise<VmCapture | null>;
}

/** A process started by `service`. */
export interface ComputerService {
  /** Writes to its stdin (in order); `eof` closes it. */
  write(bytes: Uint8Array, eof?: boolean): Promise<void>;
  /** How it ended: its exit, or why the computer lost it (`error`). */
  exited: Promise<{ result: VmExecResult } | { error: string }>;
}

export function createComputer(deps: ComputerDeps): Computer {
  const now = deps.now ?? (() => performance.now());
  let vm: VmApi | null = null;
  let status: ComputerStatus = deps.connect && deps.imageBaseUrl ? { state: 'off' } : { state: 'unavailable', message: 'This build of the app has no computer image (see the README: vm-images/build.sh).' };
  let starting: Promise<ComputerStatus> | null = null;
  let startedAt: number | null = null;
  let execCount = 0;
  /** Whether the network behind the card is the proxy's (since the last start or change). */
  let online = false;
  const terminalListeners = new Set<(bytes: Uint8Array) => void>();
  let terminalHooked = false;

  /** How much of the system image this browser holds (0..1), once the VM worker said. */
  let offline: number | null = null;
  /** Who waits for the computer to stop starting (its status reaches this worker on a port of its own). */
  const settling = new Set<() => void>();
  const set = (next: ComputerStatus) => {
    const { offline: _previous, ...state } = next;
    status = (offline === null ? state : { ...state, offline }) as ComputerStatus;
    deps.emit(status);
    if (!['downloading', 'booting', 'waking'].includes(status.state)) for (const settled of settling) settled();
  };
  /** Resolves once the status is no longer a start under way, or after `ms`. */
  const settled = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        settling.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      settling.add(done);
    });
  const onAvailability = (a: VmAvailability) => {
    const exact = a.bytesTotal ? a.bytesDone / a.bytesTotal : a.chunksTotal ? a.chunksDone / a.chunksTotal : 1;
    if (a.error) console.warn(`the computer's system image stopped downloading: ${a.error}`);
    // Whole percents: each status is an event the stack keeps, and thousands of chunks arrive.
    const share = exact >= 1 ? 1 : Math.floor(exact * 100) / 100;
    if (share === offline) return;
    offline = share;
    set(status);
  };

  const onVmStatus = (s: VmStatus) => {
    switch (s.state) {
      case 'off':
        return set({ state: 'off' });
      case 'downloading': {
        const mb = (n: number) => (n / 1024 / 1024).toFixed(0);
        const what = s.reason === 'first_start' ? 'Setting up the computer' : s.reason === 'image_changed' ? 'Updating the computer' : 'Restoring the computer';
        return set({ state: 'downloading', progress: s.bytesTotal ? s.bytesDone / s.bytesTotal : s.chunksDone / Math.max(1, s.chunksTotal), detail: `${what}: ${mb(s.bytesDone)} of ${mb(s.bytesTotal)} MB` });
      }
      case 'booting':
        startedAt ??= now();
        return set({ state: 'booting', detail: s.detail });
      case 'waking':
        startedAt = now();
        return set({ state: 'waking' });
      case 'ready': {
        const ms = startedAt === null ? null : Math.round(now() - startedAt);
        startedAt = null;
        if (s.phases) console.info(`computer ${s.woke ? 'woke' : 'booted'} in ${ms} ms: ${JSON.stringify(s.phases)}`);
        return set({ state: 'ready', woke: s.woke, wake_ms: ms });
      }
      case 'suspended':
        set({ state: 'suspended' });
        // Suspended by itself after its long quiet: its worker ends too, as after a rest.
        if ('idle' in s && vm) void endWorker(vm);
        return;
      case 'error':
        return set({ state: 'error', message: s.message, can_reboot: s.canReboot });
    }
  };

  const askNetwork = async (): Promise<ComputerNetwork> => (await deps.network?.().catch(() => null)) ?? { network: null, offline: 'it has no network' };

  function api(): VmApi {
    if (!deps.connect || !deps.imageBaseUrl) throw new ComputerUnavailableError(status.state === 'unavailable' ? status.message : 'There is no computer in this build.');
    if (!vm) {
      const connected = deps.connect();
      vm = connected;
      // A worker ended after a rest says "off" on its way out: only the current one is heard.
      void connected.subscribeStatus(deps.proxy((s: VmStatus) => void (vm === connected && onVmStatus(s))));
      void connected.subscribeAvailability(deps.proxy((a: VmAvailability) => void (vm === connected && onAvailability(a))));
    }
    return vm;
  }

  /** The VM worker of a computer that is up, started first when needed; else why not (thrown). */
  async function running(): Promise<VmApi> {
    const reached = status.state === 'ready' ? status : await start();
    if (reached.state !== 'ready') {
      throw new ComputerUnavailableError(
        reached.state === 'unavailable' ? reached.message : reached.state === 'error' ? `The computer could not start: ${reached.message}` : `The computer is not ready (${reached.state}).`,
      );
    }
    return api();
  }

  async function hookTerminal(target: VmApi) {
    if (terminalHooked) return;
    terminalHooked = true;
    await target.subscribeTerminal(deps.proxy((bytes: Uint8Array) => terminalListeners.forEach((l) => l(bytes))));
  }

  async function imageBase(): Promise<string> {
    return (await deps.storedImage?.().catch(() => null)) ?? deps.imageBaseUrl!;
  }

  function start(): Promise<ComputerStatus> {
    if (status.state === 'unavailable') return Promise.resolve(status);
    if (status.state === 'ready') return Promise.resolve(status);
    starting ??= (async () => {
      try {
        const target = api();
        await hookTerminal(target);
        startedAt = null;
        const given = await askNetwork();
        online = given.network !== null;
        const result = await target.start({ imageBaseUrl: await imageBase(), stackId: deps.stackId, ...given });
        if (!result.ok) set({ state: 'error', message: result.error.message, can_reboot: true });
        // Started: its "ready" comes through the status subscription, which may arrive after this answer.
        else if (['off', 'downloading', 'booting', 'waking'].includes(status.state)) await settled(STATUS_AFTER_START_MS);
      } catch (error) {
        set({ state: 'error', message: error instanceof Error ? error.message : String(error), can_reboot: true });
      } finally {
        starting = null;
      }
      return status;
    })();
    return starting;
  }

  /**
   * Ends the VM worker of a computer that is suspended, giving back the emulator's memory (a
   * stopped emulator keeps it while its worker lives), unless a start came meanwhile. It lets go
   * of its files first: a start meanwhile connects a new worker, which waits for them.
   */
  async function endWorker(resting: VmApi) {
    if (!deps.disconnect || vm !== resting || starting || status.state !== 'suspended') return;
    vm = null;
    terminalHooked = false;
    await resting.shutdown().catch(() => {});
    deps.disconnect(resting);
  }

  async function control(action: ComputerAction): Promise<ComputerStatus> {
    if (action === 'start') return start();
    if (action === 'download') {
      if (status.state === 'unavailable') return status;
      const result = await api().makeAvailableOffline(await imageBase());
      if (result.ok) onAvailability(result.value);
      else console.warn(`the computer's system image could not be downloaded: ${result.error.message}`);
      return status;
    }
    if (action === 'save') {
      // Only a running computer with unsaved activity has anything to save.
      if (vm && status.state === 'ready') {
        const result = await vm.checkpoint(true);
        if (!result.ok) console.warn('saving the computer failed', result.error.message);
      }
      return status;
    }
    if (action === 'rest') {
      // Nothing running in it: suspended, its memory given back; the next use wakes it.
      if (vm && status.state === 'ready') {
        const resting = vm;
        const result = await resting.rest();
        if (!result.ok) console.warn('the computer could not be suspended', result.error.message);
        else if (result.value) {
          if ((status as ComputerStatus).state !== 'suspended') await settled(STATUS_AFTER_START_MS);
          await endWorker(resting);
        }
      }
      return status;
    }
    const target = api();
    await starting;
    await hookTerminal(target);
    startedAt = now();
    const result = action === 'suspend' ? await target.suspend() : action === 'reboot' ? await target.reboot() : await target.reset();
    if (!result.ok) set({ state: 'error', message: result.error.message, can_reboot: true });
    return status;
  }

  return {
    get status() {
      return status;
    },
    async capture(since) {
      if (!vm) return null;
      // A start under way (a first download can take minutes) is waited for a while, not for ever.
      if (starting) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CAPTURE_START_WAIT_MS)));
        const outcome = await Promise.race([starting, late]).finally(() => clearTimeout(timer));
        if (outcome === 'late') throw new Error('the computer was still starting');
      }
      const result = await vm.capture(since);
      if (!result.ok) throw new Error(`the computer could not be saved for the checkpoint: ${result.error.message}`);
      return result.value;
    },
    start,
    control,
    async exec(request, options) {
      const target = await running();
      const id = `x${++execCount}-${Math.random().toString(36).slice(2, 8)}`;
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      const onOutput = options?.onOutput;
      const abort = () => void target.cancel(id);
      options?.signal?.addEventListener('abort', abort, { once: true });
      try {
        const result = await target.exec(
          id,
          request,
          onOutput ? deps.proxy((stream: 'stdout' | 'stderr', bytes: Uint8Array) => onOutput(stream, decoders[stream].decode(bytes, { stream: true }))) : undefined,
        );
        if (!result.ok) throw new ComputerUnavailableError(result.error.message);
        return result.value;
      } finally {
        options?.signal?.removeEventListener('abort', abort);
      }
    },
    async service(request, options) {
      const target = await running();
      const id = `s${++execCount}-${Math.random().toString(36).slice(2, 8)}`;
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      const abort = () => void target.cancel(id);
      options.signal.addEventListener('abort', abort, { once: true });
      const exited = target
        .exec(id, { ...request, stdin: 'pipe' }, deps.proxy((stream: 'stdout' | 'stderr', bytes: Uint8Array) => options.onOutput(stream, decoders[stream].decode(bytes, { stream: true }))), { background: true })
        .then(
          (result) => (result.ok ? { result: result.value } : { error: result.error.message }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        )
        .finally(() => options.signal.removeEventListener('abort', abort));
      // Writes go in order: each waits for the one before it to reach the VM worker.
      let writing: Promise<void> = Promise.resolve();
      return {
        write(bytes, eof = false) {
          writing = writing.then(() => target.writeStdin(id, bytes, eof)).catch(() => {});
          return writing;
        },
        exited,
      };
    },
    workspaceChanged(path) {
      // Only a running computer needs telling (its /workspace share may hold the file open); a
      // later start serves the folder as it is then.
      if (!vm || status.state === 'unavailable') return;
      void vm.workspaceChanged(path);
    },
    async subscribeTerminal(listener) {
      terminalListeners.add(listener);
      if (vm) await hookTerminal(vm);
    },
    async terminalInput(bytes) {
      // A keystroke wakes a suspended computer; it is typed once it is up.
      if (status.state !== 'ready' && (await start()).state !== 'ready') return;
      await api().terminalInput(bytes);
    },
    async terminalResize(cols, rows) {
      if (status.state !== 'ready') return;
      await api().terminalResize(cols, rows);
    },
    async networkUse() {
      // No VM worker yet: the computer has not started since the page opened.
      const traffic = vm ? await vm.networkTraffic() : { sent: 0, received: 0 };
      return { ...traffic, online: status.state === 'ready' ? online : null };
    },
    async networkChanged() {
      // A computer that is not running asks for its network when it starts.
      if (!vm || (status.state !== 'ready' && !starting)) return;
      await starting;
      const given = await askNetwork();
      online = given.network !== null;
      await vm.setNetwork(given.network, given.network ? undefined : given.offline);
    },
  };
}
