// The computer's VM worker: connected on first use, started (or woken) once however many ask,
// ended after a rest to give its memory back. What the computer's other parts share.
import type { ComputerStatus } from '../protocol/computer.ts';
import type { VmApi, VmAvailability, VmStatus } from '../vm/protocol.ts';
import { ComputerUnavailableError, type ComputerDeps, type ComputerNetwork } from './computer-api.ts';
import { STATUS_AFTER_START_MS, type StatusReport } from './computer-status.ts';

export interface ComputerConnection {
  readonly deps: ComputerDeps;
  readonly report: StatusReport;
  /** The VM worker; null before the first use and once a rest ended it. */
  readonly vm: VmApi | null;
  /** The start under way, if one is. */
  readonly starting: Promise<ComputerStatus> | null;
  /** Whether the network behind the card is the proxy's (since the last start or change). */
  online: boolean;
  /** Who reads the terminal's output. */
  readonly terminalListeners: Set<(bytes: Uint8Array) => void>;
  /** The VM worker, connected now when there is none; throws ComputerUnavailableError in a build without a computer. */
  api(): VmApi;
  /** The VM worker of a computer that is up, started first when needed; else why not (thrown). */
  running(): Promise<VmApi>;
  /** Starts (or wakes) the computer; resolves with the status it reached. Never rejects. */
  start(): Promise<ComputerStatus>;
  /** Sends the VM worker's terminal output to the listeners (once per worker). */
  hookTerminal(target: VmApi): Promise<void>;
  /** Ends a suspended computer's VM worker, unless a start came meanwhile. */
  endWorker(resting: VmApi): Promise<void>;
  /** The image to run: the one this stack brought and this browser keeps, else the app's. */
  imageBase(): Promise<string>;
  /** The network the computer is given now, or why it has none. Never rejects. */
  askNetwork(): Promise<ComputerNetwork>;
}

export function createComputerConnection(deps: ComputerDeps, report: StatusReport): ComputerConnection {
  let vm: VmApi | null = null;
  let starting: Promise<ComputerStatus> | null = null;
  let terminalHooked = false;

  const connection: ComputerConnection = {
    deps,
    report,
    get vm() {
      return vm;
    },
    get starting() {
      return starting;
    },
    online: false,
    terminalListeners: new Set(),
    api() {
      if (!deps.connect || !deps.imageBaseUrl) throw new ComputerUnavailableError(report.status.state === 'unavailable' ? report.status.message : 'There is no computer in this build.');
      if (!vm) {
        const connected = deps.connect();
        vm = connected;
        // A worker ended after a rest says "off" on its way out: only the current one is heard.
        void connected.subscribeStatus(deps.proxy((s: VmStatus) => void (vm === connected && report.onVmStatus(s))));
        void connected.subscribeAvailability(deps.proxy((a: VmAvailability) => void (vm === connected && report.onAvailability(a))));
      }
      return vm;
    },
    async running() {
      const reached = report.status.state === 'ready' ? report.status : await connection.start();
      if (reached.state !== 'ready') {
        throw new ComputerUnavailableError(
          reached.state === 'unavailable' ? reached.message : reached.state === 'error' ? `The computer could not start: ${reached.message}` : `The computer is not ready (${reached.state}).`,
        );
      }
      return connection.api();
    },
    start() {
      const status = report.status;
      if (status.state === 'unavailable') return Promise.resolve(status);
      if (status.state === 'ready') return Promise.resolve(status);
      starting ??= (async () => {
        try {
          const target = connection.api();
          await connection.hookTerminal(target);
          report.startedAt = null;
          const given = await connection.askNetwork();
          connection.online = given.network !== null;
          const result = await target.start({ imageBaseUrl: await connection.imageBase(), stackId: deps.stackId, ...given });
          if (!result.ok) report.set({ state: 'error', message: result.error.message, can_reboot: true });
          // Started: its "ready" comes through the status subscription, which may arrive after this answer.
          else if (['off', 'downloading', 'booting', 'waking'].includes(report.status.state)) await report.settled(STATUS_AFTER_START_MS);
        } catch (error) {
          report.set({ state: 'error', message: error instanceof Error ? error.message : String(error), can_reboot: true });
        } finally {
          starting = null;
        }
        return report.status;
      })();
      return starting;
    },
    async hookTerminal(target) {
      if (terminalHooked) return;
      terminalHooked = true;
      await target.subscribeTerminal(deps.proxy((bytes: Uint8Array) => connection.terminalListeners.forEach((l) => l(bytes))));
    },
    /**
     * Ends the VM worker of a computer that is suspended, giving back the emulator's memory (a
     * stopped emulator keeps it while its worker lives), unless a start came meanwhile. It lets go
     * of its files first: a start meanwhile connects a new worker, which waits for them.
     */
    async endWorker(resting) {
      if (!deps.disconnect || vm !== resting || starting || report.status.state !== 'suspended') return;
      vm = null;
      terminalHooked = false;
      await resting.shutdown().catch(() => {});
      deps.disconnect(resting);
    },
    async imageBase() {
      return (await deps.storedImage?.().catch(() => null)) ?? deps.imageBaseUrl!;
    },
    askNetwork: async () => (await deps.network?.().catch(() => null)) ?? { network: null, offline: 'it has no network' },
  };
  return connection;
}
