// The computer's serial terminal (ttyS0, a root shell): keystrokes in, its size, its output out.
import type { VmApi } from '../protocol.ts';
import type { VmContext } from './context.ts';
import type { QuietTime } from './quiet-time.ts';

export function terminalApi(ctx: VmContext, quiet: QuietTime): Pick<VmApi, 'terminalInput' | 'terminalResize' | 'subscribeTerminal'> {
  return {
    async terminalInput(bytes) {
      ctx.lastTerminalUse = Date.now();
      ctx.machine?.sendSerial(bytes);
      quiet.scheduleCheckpoint();
    },
    async terminalResize(cols, rows) {
      if (ctx.status.state !== 'ready') return;
      // Not a use of the guest: the page sends the size again whenever the computer comes up.
      await ctx.machine?.agent?.resize(rows, cols, '/dev/ttyS0').catch(() => {});
    },
    async subscribeTerminal(listener) {
      ctx.terminalListeners.add(listener);
    },
  };
}
