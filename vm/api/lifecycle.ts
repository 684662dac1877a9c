// The computer started, saved, rested, reset, rebooted and shut down: one machine per worker,
// never two emulators, and its status told to whoever listens.
import { MachineError } from '../machine-contract.ts';
import type { VmApi } from '../protocol.ts';
import type { VmContext } from './context.ts';
import { guard } from './errors.ts';
import type { MachineSetup } from './machine-setup.ts';
import type { OfflineDownload } from './offline.ts';
import type { QuietTime } from './quiet-time.ts';

type LifecycleApi = Pick<VmApi, 'start' | 'subscribeStatus' | 'suspend' | 'rest' | 'checkpoint' | 'reset' | 'reboot' | 'shutdown'>;

export function lifecycleApi(ctx: VmContext, setup: MachineSetup, quiet: QuietTime, offline: OfflineDownload): LifecycleApi {
  const api: LifecycleApi = {
    async start(options, onStatus) {
      if (onStatus) ctx.statusListeners.add(onStatus);
      return guard(async () => {
        if (ctx.opened && ctx.opened.options.stackId !== options.stackId) {
          throw new MachineError('not_running', `this computer belongs to stack ${ctx.opened.options.stackId}: use one VM worker per stack`);
        }
        if (ctx.machine && ctx.status.state === 'ready') return 'woke' as const; // already running
        await ctx.machine?.shutdown(); // e.g. after a watchdog error: never two emulators
        const machine = (ctx.machine = await setup.prepare(options, null));
        const how = await machine.start();
        ctx.startedAt = Date.now();
        quiet.startFlushing();
        if (ctx.baseChunks) void offline.downloadRest(ctx.baseChunks);
        return how;
      });
    },
    async subscribeStatus(listener) {
      ctx.statusListeners.add(listener);
      listener(ctx.status);
    },
    async suspend() {
      return guard(async () => {
        if (!ctx.machine) throw new MachineError('not_running', 'the computer is not running');
        quiet.stopTimers();
        await ctx.checkpointing;
        // No command running, and the last save written beside its disk: if nothing happened since
        // (the machine knows: a command, a keystroke, terminal output, a disk write), it stops as saved.
        const current = ctx.machine;
        const began = performance.now();
        let asSaved = false;
        await current.suspend(() => {
          const meta = ctx.files?.readMeta();
          return (asSaved = ctx.runningExecs === 0 && !!meta?.state && meta.state === meta.disk);
        });
        const phases = !asSaved && current.lastSave ? `: sync ${Math.round(current.lastSave.syncMs)}, stop ${Math.round(current.lastSave.stopMs)}, save_state ${Math.round(current.lastSave.saveStateMs)} ms` : '';
        console.info(`computer suspended in ${Math.round(performance.now() - began)} ms (${asSaved ? 'as it was saved last, nothing having happened since' : 'saved'}${phases})`);
      });
    },
    async rest() {
      const idle = () => ctx.machine !== null && ctx.status.state === 'ready' && ctx.runningExecs === 0;
      // A job the user left running in the terminal goes on (a download, a long script); a command
      // may come while the guest is asked.
      if (!idle() || (await ctx.machine!.terminalBusy()) || !idle()) return { ok: true, value: false };
      const suspended = await api.suspend();
      return suspended.ok ? { ok: true, value: true } : suspended;
    },
    async checkpoint(onlyIfChanged) {
      return guard(async () => {
        if (!ctx.machine) throw new MachineError('not_running', 'the computer is not running');
        if (onlyIfChanged && !ctx.checkpointTimer) return; // saved since the last activity, or saving now
        if (ctx.checkpointTimer) clearTimeout(ctx.checkpointTimer);
        ctx.checkpointTimer = null;
        await ctx.checkpointing;
        ctx.lastCheckpoint = Date.now();
        await ctx.machine.checkpoint();
      });
    },
    async reset() {
      return guard(async () => {
        if (!ctx.opened) throw new MachineError('not_running', 'the computer was never started');
        quiet.stopTimers();
        await ctx.machine?.shutdown();
        const machine = (ctx.machine = await setup.prepare(ctx.opened.options, 'reset'));
        const how = await machine.start();
        quiet.startFlushing();
        return how;
      });
    },
    async reboot() {
      return guard(async () => {
        if (!ctx.opened) throw new MachineError('not_running', 'the computer was never started');
        quiet.stopTimers();
        await ctx.machine?.shutdown();
        const machine = (ctx.machine = await setup.prepare(ctx.opened.options, null));
        await machine.coldBoot();
        quiet.startFlushing();
        return 'booted' as const;
      });
    },
    async shutdown() {
      quiet.stopTimers();
      ctx.downloadAbort?.abort();
      await ctx.machine?.shutdown();
      ctx.machine = null;
    },
  };
  return api;
}
