// The computer's lifecycle over v86: cold boot, suspend to a saved state, wake from it — only
// onto the very disk it was saved with — plus the agent channel, the serial terminal and a
// watchdog.
import { V86 } from 'v86';
import { AgentClient, AgentError, type AgentInfo, type AgentTransport, type ExecOptions, type ExecRequest, type ExecResult } from './agent-client.ts';
import type { EmulatorLike } from './emulator.ts';
import { emulatorOptions } from './emulator-options.ts';
import { waitEvent, waitSerialOutput, waitSerialText } from './emulator-waits.ts';
import { freshMemoryRestore } from './fresh-memory.ts';
import { setClockAndSeed, settle, TERMINAL_JOBS } from './guest-upkeep.ts';
import { compileOnePagePerModule } from './jit.ts';
import { letGo, letGoOfCopies, v86Cpu } from './let-go.ts';
import { MachineError, type MachineOptions, type MachineStatus } from './machine-contract.ts';
// What a Machine is given, named with it for the image build (vm-images/lib/prestate.ts, whose
// bytes are part of the image's recipe).
export type { MachineStore, MachineWorkspace } from './machine-contract.ts';
import { RELAY_NETWORK } from './network-link.ts';
import { restorable, type RestorableState } from './restorable-state.ts';
import { yieldLessOften } from './v86-yield.ts';
import { Workspace9p } from './workspace-9p.ts';
import { emptyWorkspaceFs } from './workspace-fs.ts';

/** On the kernel command line, holds the initramfs before it mounts the root disk (vm-images/initramfs/init). */
export const HOLD_ARG = 'stackdocs.hold';
/** What the held initramfs writes on the serial console; a newline there lets it go on. */
export const HOLD_MARKER = 'stackdocs: held before mounting the root disk';
/** After the newline, the held initramfs's terminal echoes it at once: a boot state that is not answering by then is not used. */
const RELEASE_ECHO_MS = 10_000;

interface Taken {
  generation: string;
  state: ArrayBuffer;
  /** The `saving` hook's writing. */
  recorded: Promise<void>;
  /** The guest's uses the state holds (Machine.uses when it was stopped for it). */
  uses: number;
}

export class Machine {
  /** Where the last save's time went: the guest's sync and cache drop, stopping it, save_state. */
  lastSave: { syncMs: number; stopMs: number; saveStateMs: number } | null = null;
  /** Uses of the guest so far: a command, a keystroke, output on its terminal. */
  private uses = 0;
  /** Keystrokes sent to the terminal so far (a quiet-time save taken while they came is abandoned). */
  private typed = 0;
  /** The uses the stored state holds: counted when it was taken and written, or woken from; null after a cold boot. */
  private savedUses: number | null = null;
  private emulator: EmulatorLike | null = null;
  /** The /workspace server of the current emulator. */
  private share: Workspace9p | null = null;
  private client: AgentClient | null = null;
  private readonly statusListeners = new Set<(status: MachineStatus) => void>();
  private readonly serialListeners = new Set<(bytes: Uint8Array) => void>();
  private watchdogTimer: ReturnType<typeof setInterval> | null = null;
  private lastActivity = 0;
  status: MachineStatus = { state: 'off' };

  constructor(private readonly options: MachineOptions) {
    options.disk.onFirstWrite = () => options.store.markDiskDirty();
  }

  onStatus(listener: (status: MachineStatus) => void): () => void {
    this.statusListeners.add(listener);
    listener(this.status);
    return () => this.statusListeners.delete(listener);
  }

  /** Bytes the guest writes to its serial terminal (ttyS0: a root shell). */
  onSerial(listener: (bytes: Uint8Array) => void): () => void {
    this.serialListeners.add(listener);
    return () => this.serialListeners.delete(listener);
  }

  sendSerial(bytes: Uint8Array): void {
    this.uses++;
    this.typed++;
    this.emulator?.serial_send_bytes(0, bytes);
  }

  /** Wakes from the saved state when the disk still matches it, otherwise cold boots. */
  async start(): Promise<'woke' | 'booted'> {
    const { state, disk } = await this.options.store.readGeneration();
    if (state && disk === state) {
      const saved = await this.options.store.readState();
      if (saved) {
        try {
          await this.wakeFrom(saved, state);
          return 'woke';
        } catch (error) {
          console.warn('the computer could not wake from its saved state; it boots instead', error);
          await this.teardown();
        }
      }
    }
    await this.coldBoot();
    return 'booted';
  }

  /**
   * Boots onto the disk as it is: from the image's boot state when there is one (the kernel
   * already started, held before it mounts the disk), else from the kernel; resolves once the
   * agent is ready and the clock set.
   */
  async coldBoot(): Promise<AgentInfo> {
    await this.teardown();
    this.savedUses = null;
    this.options.store.markDiskDirty();
    this.setStatus({ state: 'booting', detail: 'starting the computer' });
    const phases = new Phases();
    const held = await this.loadBootState();
    if (held) {
      try {
        phases.lap('bootState');
        const emulator = this.createEmulator({ initial_state: restorable(held) }, true);
        await waitEvent(emulator, 'emulator-started', 60_000);
        phases.lap('restore');
        const client = new AgentClient(this.transport(emulator), { awaitReady: true });
        this.client = client;
        const echoed = waitSerialOutput(emulator, this.options.releaseEchoMs ?? RELEASE_ECHO_MS);
        emulator.serial0_send('\n');
        await echoed;
        const info = await client.waitReady(this.options.bootTimeoutMs ?? 180_000);
        // Only a boot state that did not bring the agent up falls back to the kernel; the clock
        // and /workspace after it fail as they would after any boot.
        try {
          return await this.bootDone(emulator, client, info, phases);
        } catch (cause) {
          return this.fail(cause instanceof MachineError ? cause : new MachineError('boot_failed', 'the computer did not start', { cause }));
        }
      } catch (error) {
        console.warn('the computer could not start from its boot state; it starts from its kernel', error);
        await this.teardown();
      }
    }
    let images: { kernel: ArrayBuffer; initrd: ArrayBuffer | undefined };
    try {
      images = await this.loadKernel();
      phases.lap('kernel');
    } catch (cause) {
      return this.fail(new MachineError('boot_failed', 'the computer could not load its kernel', { cause }));
    }
    const emulator = this.createEmulator(kernelOptions(images, this.options.files.cmdline));
    const client = new AgentClient(this.transport(emulator), { awaitReady: true });
    this.client = client;
    try {
      return await this.bootDone(emulator, client, await client.waitReady(this.options.bootTimeoutMs ?? 180_000), phases);
    } catch (cause) {
      return this.fail(cause instanceof MachineError ? cause : new MachineError('boot_failed', 'the computer did not start', { cause }));
    }
  }

  /**
   * For the image build: starts the kernel held before it mounts the root disk (HOLD_ARG), saves
   * that state and stops. The state holds nothing read from the root disk (only the disk's size
   * and the partition scan's first sectors, which the initramfs drops when it goes on), so a cold
   * boot may restore it onto any disk of the image's size: the one exception to the generation
   * rule, and why it holds.
   */
  async captureBootState(timeoutMs = 600_000): Promise<ArrayBuffer> {
    await this.teardown();
    const emulator = this.createEmulator(kernelOptions(await this.loadKernel(), `${this.options.files.cmdline} ${HOLD_ARG}`));
    try {
      await waitSerialText(emulator, HOLD_MARKER, timeoutMs);
      // The marker is written just before the initramfs reads the console: let it get there.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await emulator.stop();
      return await emulator.save_state();
    } finally {
      await this.teardown();
    }
  }

  private async loadKernel(): Promise<{ kernel: ArrayBuffer; initrd: ArrayBuffer | undefined }> {
    const { files } = this.options;
    return typeof files.kernel === 'function' ? await files.kernel() : { kernel: files.kernel, initrd: files.initrd };
  }

  /** The image's boot state, or null (none, or it could not be loaded: the kernel boots instead). */
  private async loadBootState(): Promise<ArrayBuffer | null> {
    const { bootState } = this.options.files;
    try {
      return (typeof bootState === 'function' ? await bootState() : bootState) ?? null;
    } catch (error) {
      console.warn('the computer\'s boot state could not be loaded; it starts from its kernel', error);
      return null;
    }
  }

  /** The end of a cold boot, from the kernel or the boot state, once the agent is ready: the clock, the hooks. */
  private async bootDone(emulator: EmulatorLike, client: AgentClient, info: AgentInfo, phases: Phases): Promise<AgentInfo> {
    phases.lap('agent');
    await setClockAndSeed(client);
    await this.options.hooks?.started?.(emulator, 'booted');
    phases.lap('settime');
    this.becomeReady(info, false, phases.ms);
    return info;
  }

  /** Restores a saved state into a new emulator; the caller checked the generation. */
  private async wakeFrom(state: ArrayBuffer, generation: string): Promise<AgentInfo> {
    await this.teardown();
    this.savedUses = this.uses;
    this.setStatus({ state: 'waking' });
    const phases = new Phases();
    // The guest's 9p requests wait until the fids it held at the save are known again.
    const emulator = this.createEmulator({ initial_state: restorable(state) }, true, true);
    const share = this.share!;
    const resumed = (this.options.workspace?.read(generation) ?? Promise.resolve(null)).then(
      (snapshot) => {
        if (!share.resume(snapshot, generation)) console.warn('/workspace: the share held by the saved state is not known; the guest sees it afresh');
      },
      (error: unknown) => {
        share.resume(null, null);
        throw error;
      },
    );
    await waitEvent(emulator, 'emulator-started', 60_000);
    phases.lap('restore');
    const client = new AgentClient(this.transport(emulator), { awaitReady: false });
    this.client = client;
    // The agent's answer, the clock and /workspace side by side: the first two wait on the guest,
    // the last mostly on storage. Each phase is its time after the restore.
    const after = <T>(name: string, work: Promise<T>) =>
      work.then((value) => {
        phases.since(name);
        return value;
      });
    const [agent, ...others] = await Promise.allSettled([
      after('ping', client.ping(30_000)),
      after('settime', setClockAndSeed(client)),
      after('workspace', resumed),
      after('started', this.options.hooks?.started?.(emulator, 'woke') ?? Promise.resolve()),
    ]);
    for (const outcome of [agent, ...others]) if (outcome.status === 'rejected') throw outcome.reason;
    const info = (agent as PromiseFulfilledResult<AgentInfo>).value;
    this.becomeReady(info, true, phases.ms);
    return info;
  }

  /**
   * Flushes the guest's disk, saves the state, writes it with a fresh generation and stops the
   * emulator. Afterwards start() wakes from it.
   *
   * `asSaved`: asked once the guest is stopped, whether its last saved state still stands for it
   * (the caller knows nothing ran since, and the stored state is the disk's). Then, with no disk
   * write since that save either, it is not saved again: the next start wakes from that state, as
   * after a tab closed at that moment. What the guest did on its own meanwhile (its clock ticking)
   * is not kept, as it is not after a killed tab; the wake sets its clock.
   */
  async suspend(asSaved?: () => boolean): Promise<void> {
    this.stopWatchdog();
    const { emulator } = this.requireRunning();
    try {
      if (asSaved && this.savedUses === this.uses) {
        await emulator.stop();
        // A read still waiting for its chunk lands first, as before a save.
        await this.options.disk.settled?.();
        if (this.savedUses === this.uses && !this.options.disk.dirty && asSaved()) {
          await this.teardown();
          this.setStatus({ state: 'suspended' });
          return;
        }
        await emulator.run();
      }
      const taken = await this.take();
      await this.keep(taken);
      letGo(taken.state);
    } catch (cause) {
      return this.fail(new MachineError('save_failed', 'the computer could not be saved', { cause }));
    }
    await this.teardown();
    this.setStatus({ state: 'suspended' });
  }

  /**
   * Saves the state like suspend() but keeps running: a tab closed or killed afterwards still
   * wakes in about a second, as long as the disk did not move on. Returns the generation.
   * `whileStopped` runs after the save and before the guest runs on (a checkpoint copies the disk).
   * The state is written while the guest runs on (`ranOn` hears when it does, with the state);
   * a disk write meanwhile leaves it marked stale, as any disk write after a save does.
   * `quiet`: a save of a computer left alone, abandoned (MachineError `save_abandoned`, the guest
   * running on, nothing written) when the terminal was typed into while the guest synced.
   */
  async checkpoint(
    whileStopped?: (generation: string, state: ArrayBuffer) => void | Promise<void>,
    ranOn?: (generation: string, state: ArrayBuffer) => void,
    { quiet = false }: { quiet?: boolean } = {},
  ): Promise<string> {
    this.requireRunning();
    let taken: Taken;
    try {
      taken = await this.take(quiet);
    } catch (cause) {
      await this.emulator?.run();
      if (cause instanceof MachineError && cause.code === 'save_abandoned') throw cause;
      throw new MachineError('save_failed', 'the computer could not be saved', { cause });
    }
    const { generation, state } = taken;
    let written: Promise<void>;
    try {
      written = this.keep(taken);
      written.catch(() => {}); // awaited below, once the guest runs on
      await whileStopped?.(generation, state);
    } finally {
      await this.emulator?.run();
    }
    ranOn?.(generation, state);
    try {
      await written;
    } catch (cause) {
      throw new MachineError('save_failed', 'the computer could not be saved', { cause });
    }
    // Written, and no caller holds it: the quiet-time saves of a computer in use.
    if (!whileStopped && !ranOn) letGo(state);
    return generation;
  }

  /**
   * Stops the guest with its disk synced and takes its state, in memory. The disk's dirty flag is
   * cleared here, while nothing writes: the guest's next write marks this state stale.
   */
  private async take(quiet = false): Promise<Taken> {
    const { emulator, client } = this.requireRunning();
    const began = performance.now();
    const typed = this.typed;
    await settle(client);
    const synced = performance.now();
    await emulator.stop();
    // The shell read what was typed while the guest synced: its state would hold a half-typed
    // line, which a reload would wake into unseen, in front of the next command typed.
    if (quiet && this.typed !== typed) throw new MachineError('save_abandoned', 'the terminal was typed into while the computer was being saved');
    const uses = this.uses;
    // A read still waiting for its chunk would be lost with the state: let it land first.
    await this.options.disk.settled?.();
    // No 9p request may be half answered in a state (v86 keeps the pending ones in it).
    await this.share?.drain();
    await this.options.hooks?.beforeSave?.();
    const stopped = performance.now();
    const state = await emulator.save_state();
    this.options.disk.flush();
    this.options.disk.clearDirty();
    this.lastSave = { syncMs: synced - began, stopMs: stopped - synced, saveStateMs: performance.now() - stopped };
    const generation = crypto.randomUUID();
    // What belongs with the state is taken now, while the guest is stopped; it is written later.
    const snapshot = this.share?.snapshot(generation);
    const recorded = Promise.all([this.options.hooks?.saving?.(generation), snapshot && this.options.workspace?.write(snapshot)]).then(() => {});
    recorded.catch(() => {});
    return { generation, state, recorded, uses };
  }

  private requireRunning(): { emulator: EmulatorLike; client: AgentClient } {
    const { emulator, client } = this;
    if (!emulator || !client || this.status.state !== 'ready') throw new MachineError('not_running', 'the computer is not running');
    return { emulator, client };
  }

  /** Writes a taken state; its generation is the disk's too unless the guest wrote since it was taken. */
  private async keep({ generation, state, recorded, uses }: Taken): Promise<void> {
    const disk = this.options.disk;
    await this.options.store.writeState(state, generation, () => disk.dirty);
    await recorded;
    this.savedUses = uses;
  }

  /** Runs a program in the computer (see AgentClient.exec). */
  async exec(request: ExecRequest, options?: ExecOptions): Promise<ExecResult> {
    const client = this.client;
    if (!client || this.status.state !== 'ready') throw new MachineError('not_running', 'the computer is not running');
    this.lastActivity = Date.now();
    this.uses++;
    try {
      return await client.exec(request, options);
    } finally {
      this.lastActivity = Date.now();
      this.uses++;
    }
  }

  /**
   * Whether a program the user started in the terminal still runs (foreground or background).
   * Asked of the guest without counting as a use of it; an unclear answer counts as busy.
   */
  async terminalBusy(): Promise<boolean> {
    const client = this.client;
    if (!client || this.status.state !== 'ready') return false;
    try {
      const result = await client.exec({ command: TERMINAL_JOBS, timeout: 10 });
      return result.stdout?.trim() !== 'idle';
    } catch {
      return true;
    }
  }

  /** The stack worker changed a file under /workspace: nothing the share holds of it may be stale. */
  async workspaceChanged(path: string): Promise<void> {
    await this.share?.changed(path);
  }

    get agent(): AgentClient | null {
    return this.client;
  }

  /** Stops and frees the emulator without saving. Must not throw. */
  async shutdown(): Promise<void> {
    await this.teardown();
    this.setStatus({ state: 'off' });
  }

  /**
   * `restoring`: the emulator starts from a saved state (its fresh RAM need not be zeroed).
   * `resuming`: from a state whose guest holds /workspace fids (its share waits for `resume`).
   */
  private createEmulator(extra: Record<string, unknown>, restoring = false, resuming = false): EmulatorLike {
    const { files, disk, wasmPath, wasmFn } = this.options;
    const wasm = wasmFn && { wasm_fn: restoring ? freshMemoryRestore(wasmFn) : wasmFn };
    const { link } = this.options;
    const share = new Workspace9p(this.options.workspace?.fs ?? emptyWorkspaceFs(), resuming);
    this.share = share;
    const options = { ...emulatorOptions(files, disk, wasmPath, link ? RELAY_NETWORK : null, share.handle), ...wasm, ...extra };
    const create = this.options.createEmulator ?? ((o) => new V86(o as never) as unknown as EmulatorLike);
    const emulator = create(options);
    // v86 holds on to its options while the emulator lives, and through them to a restored state.
    const initial = extra.initial_state as RestorableState | undefined;
    if (initial) emulator.add_listener('emulator-started', (() => initial.release()) as (value: never) => void);
    // v86's copies of the guest's RAM, made by a restore and by each save, are let go of once used
    // (let-go.ts): from when the emulator has its CPU, which is before it loads a state.
    // The JIT's setting too (jit.ts), and how often v86 yields (v86-yield.ts), before any guest
    // code runs.
    const cover = () => {
      const cpu = v86Cpu(emulator);
      if (cpu) letGoOfCopies(cpu);
      compileOnePagePerModule(emulator);
      yieldLessOften(emulator);
    };
    if (initial) initial.loading = cover;
    emulator.add_listener('emulator-loaded', cover as (value: never) => void);
    this.options.traffic?.attach(emulator);
    link?.attach(emulator);
    emulator.add_listener('serial0-output-byte', ((byte: number) => {
      this.uses++;
      const bytes = new Uint8Array([byte]);
      for (const listener of this.serialListeners) listener(bytes);
    }) as (value: never) => void);
    this.emulator = emulator;
    return emulator;
  }

  private transport(emulator: EmulatorLike): AgentTransport {
    const port = this.options.files.agentPort;
    return {
      send: (bytes) => emulator.bus.send(`virtio-console${port}-input-bytes`, bytes),
      onBytes: (listener) => {
        const handler = listener as (value: never) => void;
        emulator.add_listener(`virtio-console${port}-output-bytes`, handler);
        return () => emulator.remove_listener(`virtio-console${port}-output-bytes`, handler);
      },
    };
  }

  private becomeReady(info: AgentInfo, woke: boolean, phases?: Record<string, number>): void {
    this.client?.onReady((next, restarted) => {
      if (restarted) this.setStatus({ state: 'ready', bootId: next.bootId, woke: false });
    });
    this.setStatus({ state: 'ready', bootId: info.bootId, woke, ...(phases ? { phases } : {}) });
    this.startWatchdog();
  }

  private startWatchdog(): void {
    const watchdog = this.options.watchdog ?? { intervalMs: 30_000, timeoutMs: 20_000 };
    if (!watchdog) return;
    this.lastActivity = Date.now();
    let busy = false;
    this.watchdogTimer = setInterval(() => {
      const client = this.client;
      if (busy || !client || this.status.state !== 'ready') return;
      if (client.pendingCount > 0 || Date.now() - this.lastActivity < watchdog.intervalMs) return;
      busy = true;
      client.ping(watchdog.timeoutMs).then(
        () => {
          busy = false;
          this.lastActivity = Date.now();
        },
        () => {
          busy = false;
          if (this.status.state !== 'ready') return;
          this.stopWatchdog();
          this.setStatus({ state: 'error', message: 'the computer stopped answering', canReboot: true });
        },
      );
    }, Math.min(watchdog.intervalMs, 1000));
  }

  private stopWatchdog(): void {
    if (this.watchdogTimer) clearInterval(this.watchdogTimer);
    this.watchdogTimer = null;
  }

  private async teardown(): Promise<void> {
    this.stopWatchdog();
    this.client?.close();
    this.client = null;
    const emulator = this.emulator;
    this.emulator = null;
    if (emulator) {
      try {
        await emulator.destroy();
      } catch {
        // already gone
      }
    }
    // Its open files let go: the stack worker may replace them.
    const share = this.share;
    this.share = null;
    if (share) await share.release().catch(() => {});
  }

  private async fail(error: MachineError): Promise<never> {
    await this.teardown();
    const reason = error.cause instanceof AgentError || error.cause instanceof Error ? `: ${error.cause.message}` : '';
    this.setStatus({ state: 'error', message: `${error.message}${reason}`, canReboot: true });
    throw error;
  }

  private setStatus(status: MachineStatus): void {
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }
}

/** v86's options for a boot from the kernel. */
function kernelOptions(images: { kernel: ArrayBuffer; initrd: ArrayBuffer | undefined }, cmdline: string): Record<string, unknown> {
  return { bzimage: { buffer: images.kernel }, ...(images.initrd ? { initrd: { buffer: images.initrd } } : {}), cmdline };
}

/** Where a start spends its time: each phase in ms, reported with the ready status. */
class Phases {
  readonly ms: Record<string, number> = {};
  private mark = performance.now();

  /** Ends a phase: its time since the last one ended. */
  lap(name: string): void {
    const at = performance.now();
    this.ms[name] = Math.round(at - this.mark);
    this.mark = at;
  }

  /** A phase run beside others: its time since the last lap, which it does not end. */
  since(name: string): void {
    this.ms[name] = Math.round(performance.now() - this.mark);
  }
}

