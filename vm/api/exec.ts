// Commands in the computer: run (a command, or a server that runs on), cancelled, fed stdin; and
// the stack worker's file changes, which every command asked after them sees.
import { MachineError } from '../machine-contract.ts';
import type { VmApi } from '../protocol.ts';
import type { VmContext } from './context.ts';
import { guard } from './errors.ts';
import type { VmNetworkNotices } from './network-notices.ts';
import type { QuietTime } from './quiet-time.ts';

export function execApi(ctx: VmContext, notices: VmNetworkNotices, quiet: QuietTime): Pick<VmApi, 'exec' | 'cancel' | 'writeStdin' | 'workspaceChanged'> {
  /** Execs asked for and not yet ended: settled once the guest has been handed each. */
  const execsSent = new Map<string, Promise<void>>();
  return {
    async exec(id, request, onOutput, options) {
      // Stdin written before the guest has the exec would be refused there: writes wait for it.
      let sent = () => {};
      execsSent.set(id, new Promise<void>((resolve) => (sent = resolve)));
      ctx.runningExecs++;
      const result = await guard(async () => {
        if (!ctx.machine) throw new MachineError('not_running', 'the computer is not running');
        // A command sees every file the stack worker wrote before asking for it (a hook after a write).
        await ctx.hostChanges;
        await ctx.checkpointing; // a checkpoint pauses the machine for a moment
        const machine = ctx.machine;
        const streams = onOutput ? { onStdout: (b: Uint8Array) => onOutput('stdout', b), onStderr: (b: Uint8Array) => onOutput('stderr', b) } : {};
        if (options?.background) {
          // A server runs for as long as the stack is open. Its start is work like a command's
          // (saves, the image download and /workspace flushes wait); once it first answers, or
          // after a minute, the machine saves and rests around it.
          ctx.activeExecs++;
          let starting = true;
          const answered = () => {
            if (!starting) return;
            starting = false;
            ctx.activeExecs--;
            quiet.scheduleCheckpoint();
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
        ctx.activeExecs++;
        const noticesBefore = notices.count();
        try {
          const running = machine.exec(request, { id, ...streams });
          sent();
          const result = await running;
          const network = notices.since(noticesBefore);
          return { ...result, ...(network.length ? { network } : {}) };
        } finally {
          ctx.activeExecs--;
          quiet.scheduleCheckpoint();
        }
      }).finally(() => ctx.runningExecs--);
      sent();
      execsSent.delete(id);
      return result;
    },
    async cancel(id, signal) {
      ctx.machine?.agent?.cancel(id, signal);
    },
    async writeStdin(id, bytes, eof) {
      await execsSent.get(id);
      ctx.machine?.agent?.writeStdin(id, bytes, eof);
    },
    async workspaceChanged(path) {
      // Recorded before its first await: an exec asked after it (in message order) waits for it.
      const change = ctx.hostChanges.then(() => ctx.machine?.workspaceChanged(path));
      ctx.hostChanges = change.catch(() => {});
      return guard(async () => {
        await change;
      });
    },
  };
}
