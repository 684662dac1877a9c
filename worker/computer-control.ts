// The computer's controls (the page's buttons and the page's own visibility): start, save,
// rest, download the image, suspend, reboot, reset.
import type { ComputerAction, ComputerStatus } from '../protocol/computer.ts';
import type { ComputerConnection } from './computer-connection.ts';
import { STATUS_AFTER_START_MS } from './computer-status.ts';

/** Does `action` and resolves with the status it left the computer in. */
export async function controlComputer(connection: ComputerConnection, action: ComputerAction, now: () => number): Promise<ComputerStatus> {
  const { report, vm } = connection;
  if (action === 'start') return connection.start();
  if (action === 'download') {
    if (report.status.state === 'unavailable') return report.status;
    const result = await connection.api().makeAvailableOffline(await connection.imageBase());
    if (result.ok) report.onAvailability(result.value);
    else console.warn(`the computer's system image could not be downloaded: ${result.error.message}`);
    return report.status;
  }
  if (action === 'save') {
    // Only a running computer with unsaved activity has anything to save.
    if (vm && report.status.state === 'ready') {
      const result = await vm.checkpoint(true);
      if (!result.ok) console.warn('saving the computer failed', result.error.message);
    }
    return report.status;
  }
  if (action === 'rest') {
    // Nothing running in it: suspended, its memory given back; the next use wakes it.
    if (vm && report.status.state === 'ready') {
      const resting = vm;
      const result = await resting.rest();
      if (!result.ok) console.warn('the computer could not be suspended', result.error.message);
      else if (result.value) {
        if ((report.status as ComputerStatus).state !== 'suspended') await report.settled(STATUS_AFTER_START_MS);
        await connection.endWorker(resting);
      }
    }
    return report.status;
  }
  const target = connection.api();
  await connection.starting;
  await connection.hookTerminal(target);
  report.startedAt = now();
  const result = action === 'suspend' ? await target.suspend() : action === 'reboot' ? await target.reboot() : await target.reset();
  if (!result.ok) report.set({ state: 'error', message: result.error.message, can_reboot: true });
  return report.status;
}
