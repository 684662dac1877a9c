// The stack's computer as the stack worker sees it: the VM worker (vm/) behind VmApi, its status
// as ComputerStatus events, exec for the bash tool, the terminal, and /workspace kept in step
// with the files the stack worker writes. Its parts: the VM worker's connection and start
// (computer-connection.ts), its status (computer-status.ts), its controls (computer-control.ts)
// and the programs run in it (computer-processes.ts).
import type { ComputerStatus } from '../protocol/computer.ts';
import type { Computer, ComputerDeps } from './computer-api.ts';
import { createComputerConnection, type ComputerConnection } from './computer-connection.ts';
import { controlComputer } from './computer-control.ts';
import { createComputerProcesses } from './computer-processes.ts';
import { createStatusReport } from './computer-status.ts';

export type { ExecRequest } from '../vm/protocol.ts';
export { ComputerUnavailableError, type Computer, type ComputerDeps, type ComputerNetwork, type ComputerService } from './computer-api.ts';

/** How long a checkpoint waits for the computer to finish starting before it is given up. */
const CAPTURE_START_WAIT_MS = 20_000;

export function createComputer(deps: ComputerDeps): Computer {
  const now = deps.now ?? (() => performance.now());
  const initial: ComputerStatus = deps.connect && deps.imageBaseUrl ? { state: 'off' } : { state: 'unavailable', message: 'This build of the app has no computer image (see the README: vm-images/build.sh).' };
  const report = createStatusReport({
    initial,
    emit: deps.emit,
    now,
    onIdleSuspend: () => void (connection.vm && connection.endWorker(connection.vm)),
  });
  const connection: ComputerConnection = createComputerConnection(deps, report);
  const { exec, service } = createComputerProcesses(connection);

  return {
    get status() {
      return report.status;
    },
    async capture(since) {
      const { starting } = connection;
      if (!connection.vm) return null;
      // A start under way (a first download can take minutes) is waited for a while, not for ever.
      if (starting) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CAPTURE_START_WAIT_MS)));
        const outcome = await Promise.race([starting, late]).finally(() => clearTimeout(timer));
        if (outcome === 'late') throw new Error('the computer was still starting');
      }
      const result = await connection.vm!.capture(since);
      if (!result.ok) throw new Error(`the computer could not be saved for the checkpoint: ${result.error.message}`);
      return result.value;
    },
    start: connection.start,
    control: (action) => controlComputer(connection, action, now),
    exec,
    service,
    workspaceChanged(path) {
      // Only a running computer needs telling (its /workspace share may hold the file open); a
      // later start serves the folder as it is then.
      if (!connection.vm || report.status.state === 'unavailable') return;
      void connection.vm.workspaceChanged(path);
    },
    async subscribeTerminal(listener) {
      connection.terminalListeners.add(listener);
      if (connection.vm) await connection.hookTerminal(connection.vm);
    },
    async terminalInput(bytes) {
      // A keystroke wakes a suspended computer; it is typed once it is up.
      if (report.status.state !== 'ready' && (await connection.start()).state !== 'ready') return;
      await connection.api().terminalInput(bytes);
    },
    async terminalResize(cols, rows) {
      if (report.status.state !== 'ready') return;
      await connection.api().terminalResize(cols, rows);
    },
    async networkUse() {
      // No VM worker yet: the computer has not started since the page opened.
      const traffic = connection.vm ? await connection.vm.networkTraffic() : { sent: 0, received: 0 };
      return { ...traffic, online: report.status.state === 'ready' ? connection.online : null };
    },
    async networkChanged() {
      // A computer that is not running asks for its network when it starts.
      if (!connection.vm || (report.status.state !== 'ready' && !connection.starting)) return;
      await connection.starting;
      const given = await connection.askNetwork();
      connection.online = given.network !== null;
      await connection.vm!.setNetwork(given.network, given.network ? undefined : given.offline);
    },
  };
}
