// The computer's status as the page sees it: the VM worker's own states and the system image's
// download turned into ComputerStatus events, and a way to wait for a start to settle.
import type { ComputerStatus } from '../protocol/computer.ts';
import type { VmAvailability, VmStatus } from '../vm/protocol.ts';

/** How long a start that answered waits for the computer's "ready" to arrive by its own port. */
export const STATUS_AFTER_START_MS = 5_000;

export interface StatusReport {
  readonly status: ComputerStatus;
  /** When the start or wake being timed began (its time goes into "ready"); null when none is. */
  startedAt: number | null;
  /** Takes `next` as the status (with what the browser holds of the image) and tells the page. */
  set(next: ComputerStatus): void;
  /** Resolves once the status is no longer a start under way, or after `ms`. */
  settled(ms: number): Promise<void>;
  /** The VM worker's word on how much of the system image this browser holds. */
  onAvailability(availability: VmAvailability): void;
  /** The VM worker's own status. */
  onVmStatus(status: VmStatus): void;
}

export function createStatusReport(options: {
  initial: ComputerStatus;
  emit(status: ComputerStatus): void;
  now(): number;
  /** The computer suspended itself after its long quiet: its worker may end, as after a rest. */
  onIdleSuspend(): void;
}): StatusReport {
  const { emit, now } = options;
  let status = options.initial;
  /** How much of the system image this browser holds (0..1), once the VM worker said. */
  let offline: number | null = null;
  /** Who waits for the computer to stop starting (its status reaches this worker on a port of its own). */
  const settling = new Set<() => void>();

  const report: StatusReport = {
    get status() {
      return status;
    },
    startedAt: null,
    set(next) {
      const { offline: _previous, ...state } = next;
      status = (offline === null ? state : { ...state, offline }) as ComputerStatus;
      emit(status);
      if (!['downloading', 'booting', 'waking'].includes(status.state)) for (const settled of settling) settled();
    },
    settled: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          settling.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        settling.add(done);
      }),
    onAvailability(a) {
      const exact = a.bytesTotal ? a.bytesDone / a.bytesTotal : a.chunksTotal ? a.chunksDone / a.chunksTotal : 1;
      if (a.error) console.warn(`the computer's system image stopped downloading: ${a.error}`);
      // Whole percents: each status is an event the stack keeps, and thousands of chunks arrive.
      const share = exact >= 1 ? 1 : Math.floor(exact * 100) / 100;
      if (share === offline) return;
      offline = share;
      report.set(status);
    },
    onVmStatus(s) {
      const set = report.set;
      switch (s.state) {
        case 'off':
          return set({ state: 'off' });
        case 'downloading': {
          const mb = (n: number) => (n / 1024 / 1024).toFixed(0);
          const what = s.reason === 'first_start' ? 'Setting up the computer' : s.reason === 'image_changed' ? 'Updating the computer' : 'Restoring the computer';
          return set({ state: 'downloading', progress: s.bytesTotal ? s.bytesDone / s.bytesTotal : s.chunksDone / Math.max(1, s.chunksTotal), detail: `${what}: ${mb(s.bytesDone)} of ${mb(s.bytesTotal)} MB` });
        }
        case 'booting':
          report.startedAt ??= now();
          return set({ state: 'booting', detail: s.detail });
        case 'waking':
          report.startedAt = now();
          return set({ state: 'waking' });
        case 'ready': {
          const ms = report.startedAt === null ? null : Math.round(now() - report.startedAt);
          report.startedAt = null;
          if (s.phases) console.info(`computer ${s.woke ? 'woke' : 'booted'} in ${ms} ms: ${JSON.stringify(s.phases)}`);
          return set({ state: 'ready', woke: s.woke, wake_ms: ms });
        }
        case 'suspended':
          set({ state: 'suspended' });
          // Suspended by itself after its long quiet: its worker ends too, as after a rest.
          if ('idle' in s) options.onIdleSuspend();
          return;
        case 'error':
          return set({ state: 'error', message: s.message, can_reboot: s.canReboot });
      }
    },
  };
  return report;
}
