// The rest of the image fetched into this browser in the background, so the computer works
// offline, paced behind the user's own work; its progress told to availability listeners.
import type { BaseChunks, BaseProgress } from '../disk/base-chunks.ts';
import { fetchManifest } from '../image.ts';
import type { VmApi, VmAvailability } from '../protocol.ts';
import type { VmContext } from './context.ts';
import { guard, toVmError } from './errors.ts';
import type { MachineSetup } from './machine-setup.ts';

export interface OfflineDownload {
  /**
   * Fetches the rest of the image into this browser, two chunks at a time, so the computer works
   * offline; progress goes to availability listeners. Stops quietly offline (tried again at the
   * next start) and says so when storage is full.
   */
  downloadRest(base: BaseChunks): Promise<void>;
  api: Pick<VmApi, 'makeAvailableOffline' | 'subscribeAvailability'>;
}

export function createOfflineDownload(ctx: VmContext, setup: MachineSetup): OfflineDownload {
  const availabilityListeners = new Set<(availability: VmAvailability) => void>();
  let availability: VmAvailability | null = null;
  let downloading: Promise<void> | null = null;
  let availabilityToldAt = 0;
  const setAvailability = (next: VmAvailability) => {
    availability = next;
    // At most twice a second while chunks stream in (each crosses to the stack worker).
    const now = Date.now();
    if (next.state === 'downloading' && now - availabilityToldAt < 500) return;
    availabilityToldAt = now;
    for (const listener of availabilityListeners) listener(next);
  };

  function downloadRest(base: BaseChunks): Promise<void> {
    if (downloading) return downloading;
    ctx.downloadAbort = new AbortController();
    const progress = (p: BaseProgress, state: VmAvailability['state'], error?: string) =>
      setAvailability({ state, ...p, ...(error ? { error } : {}) });
    // The user's work first: the download waits while a command runs, the terminal is in use
    // (typed into or printing), or the guest reads its disk, e.g. a silent command in the
    // terminal (its chunks, hashed and stored, take time from the emulator in this same worker,
    // and the guest's own fetches queue beside them: a first `import pandas` took 150-180 s
    // beside the download).
    // It also waits a moment after a start: a first command, which reads what it needs at once,
    // has the connection to itself.
    const pace = async () => {
      const busy = () =>
        ctx.activeExecs > 0 || Date.now() - ctx.lastTerminalUse < 3000 || Date.now() - base.lastWaitedAt < 3000 || Date.now() - ctx.startedAt < 10_000;
      while (busy()) await new Promise((resolve) => setTimeout(resolve, 500));
    };
    downloading = base
      .downloadAll((p) => progress(p, p.chunksDone === p.chunksTotal ? 'complete' : 'downloading'), ctx.downloadAbort.signal, pace)
      .then((p) => progress(p, 'complete'))
      .catch(async (error: unknown) => {
        const p = await base.progress();
        if (ctx.downloadAbort?.signal.aborted) return progress(p, 'paused');
        progress(p, 'paused', toVmError(error).message);
      })
      .finally(() => {
        downloading = null;
      });
    return downloading;
  }

  return {
    downloadRest,
    api: {
      async makeAvailableOffline(imageBaseUrl) {
        return guard(async () => {
          const base = await setup.baseFor(await fetchManifest(imageBaseUrl, ctx.imageFetch), imageBaseUrl);
          await downloadRest(base);
          return availability ?? { state: 'complete' as const, ...(await base.progress()) };
        });
      },
      async subscribeAvailability(listener) {
        availabilityListeners.add(listener);
        if (availability) listener(availability);
      },
    },
  };
}
