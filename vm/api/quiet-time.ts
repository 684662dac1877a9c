// What the VM worker does when the computer is left alone: a save after a few quiet seconds (so a
// reload or a killed tab still wakes in a second), a rest after a long quiet, and every second the
// warm set written and the image's chunks given back once the guest stops reading its disk.
import { letGo } from '../let-go.ts';
import { MachineError } from '../machine-contract.ts';
import { writeWarmSet } from '../opfs-store.ts';
import type { VmResult } from '../protocol.ts';
import type { QuietSave, VmContext } from './context.ts';

/** How long the guest reads nothing from its disk before the chunks kept in memory go back. */
const DISK_QUIET_MS = 15_000;

export interface QuietTime {
  /**
   * After activity: once the machine has been quiet for a while, save it where it stands (at
   * most every 15 s: a save writes ~100 MB), so a reload or a killed tab still wakes in a second.
   * `activity`: the user's or the agent's (it also puts off the idle suspend); the guest's own disk writes are not.
   */
  scheduleCheckpoint(activity?: boolean): void;
  /** A machine started: the idle rest and the once-a-second upkeep begin. */
  startFlushing(): void;
  stopTimers(): void;
}

/** `rest`: the API's rest (VmApi.rest), which the idle timer asks for. */
export function createQuietTime(ctx: VmContext, rest: () => Promise<VmResult<boolean>>): QuietTime {
  let flushTimer: ReturnType<typeof setInterval> | null = null;
  let idleTimer: ReturnType<typeof setTimeout> | null = null;

  const scheduleCheckpoint = (activity = true) => {
    const quiet = ctx.deps.checkpointAfterMs ?? 4000;
    const after = quiet && Math.max(quiet, ctx.lastCheckpoint + 15_000 - Date.now());
    if (ctx.checkpointTimer) clearTimeout(ctx.checkpointTimer);
    ctx.checkpointTimer = null;
    if (activity) scheduleIdleSuspend();
    if (!after) return;
    ctx.checkpointTimer = setTimeout(() => {
      ctx.checkpointTimer = null;
      if (!ctx.machine || ctx.activeExecs > 0 || ctx.status.state !== 'ready') return; // the command's end schedules it again
      if (ctx.checkpointing) return scheduleCheckpoint(false); // a save under way may have begun before the last write
      const current = ctx.machine;
      const previous = ctx.lastCheckpoint;
      ctx.lastCheckpoint = Date.now();
      let took = () => {};
      const save: QuietSave = { taken: new Promise<void>((resolve) => (took = resolve)), state: null };
      ctx.quietSave = save;
      ctx.checkpointing = current
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
            ctx.lastCheckpoint = previous;
            if (ctx.checkpointTimer) scheduleCheckpoint(false);
          } else console.warn('checkpoint failed', error);
        })
        .finally(() => {
          ctx.checkpointing = null;
          if (ctx.quietSave === save) ctx.quietSave = null;
          took();
          // Written: its memory goes back now (a capture that used it took a copy).
          if (save.state) letGo(save.state.state);
          save.state = null;
        });
    }, after);
  };

  /**
   * Long quiet: a rest, as for a hidden page (not while a command, a server or a terminal job
   * runs; the next exec or keystroke wakes it in about a second). Its "suspended" says `idle`, and
   * the stack ends this worker then: a tab left open in view gives the emulator's memory back too.
   */
  const scheduleIdleSuspend = () => {
    const after = ctx.deps.suspendAfterMs ?? 15 * 60_000;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (!after) return;
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (!ctx.machine || ctx.activeExecs > 0 || ctx.status.state !== 'ready') return;
      ctx.restingIdle = true;
      void rest()
        .then((rested) => rested.ok && !rested.value && scheduleIdleSuspend())
        .finally(() => (ctx.restingIdle = false));
    }, after);
  };

  const startFlushing = () => {
    scheduleIdleSuspend();
    if (flushTimer) return;
    flushTimer = setInterval(() => {
      if (Date.now() - warmSetSavedAt > 10_000) saveWarmSet();
      // The guest done reading its disk a while: the image's chunks kept for its next reads
      // (up to 88 MiB) go back, read again from storage when wanted.
      ctx.baseChunks?.trimWhenQuiet(ctx.deps.diskQuietMs ?? DISK_QUIET_MS);
    }, 1000);
  };
  /** What the guest read lately, for the next start to load ahead (not tied to saves: a session that only reads saves nothing). */
  let warmSetSavedAt = 0;
  let warmSetChanges = -1;
  const saveWarmSet = () => {
    warmSetSavedAt = Date.now();
    const { baseChunks, files } = ctx;
    if (!baseChunks || !files || baseChunks.usedChanges === warmSetChanges) return;
    warmSetChanges = baseChunks.usedChanges;
    void writeWarmSet(files.vmDir, baseChunks.recentlyUsed()).catch(() => {});
  };
  const stopTimers = () => {
    if (ctx.checkpointTimer) clearTimeout(ctx.checkpointTimer);
    if (flushTimer) clearInterval(flushTimer);
    if (idleTimer) clearTimeout(idleTimer);
    ctx.checkpointTimer = null;
    flushTimer = null;
    idleTimer = null;
  };
  return { scheduleCheckpoint, startFlushing, stopTimers };
}
