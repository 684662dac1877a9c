// The lifecycle decisions (wake or cold boot, generations, watchdog) over a fake emulator.
import { describe, expect, it, vi } from 'vitest';
import { SyncFileDisk, type SyncFile } from './disk.ts';
import { fakeEmulatorFactory, type FakeEmulator } from './testing/fake-guest.ts';
import { Machine } from './machine.ts';
import type { MachineBootFiles, MachineStatus, MachineStore } from './machine-contract.ts';
import { useArrayBufferTransfer } from './testing/test-transfer.ts';

function memoryFile(size: number): SyncFile {
  const data = new Uint8Array(size);
  return {
    read: (b, at) => (b.set(data.subarray(at, at + b.length)), b.length),
    write: (b, at) => (data.set(b, at), b.length),
    flush: () => {},
    size,
    truncate: () => {},
    close: () => {},
  };
}

function memoryStore(): MachineStore & { state: ArrayBuffer | null; gen: { state: string | null; disk: string | null } } {
  return {
    state: null,
    gen: { state: null, disk: null },
    async readState() { return this.state && this.state.slice(0); },
    async writeState(state, generation, diskMovedOn) { this.state = state.slice(0); this.gen = { state: generation, disk: diskMovedOn?.() ? null : generation }; },
    async readGeneration() { return { ...this.gen }; },
    markDiskDirty() { this.gen.disk = null; },
    async clearState() { this.state = null; this.gen = { state: null, disk: null }; },
  };
}

function setup(
  store = memoryStore(),
  opts: { silent?: boolean; reseeds?: boolean; held?: boolean; bootState?: MachineBootFiles['bootState']; watchdog?: { intervalMs: number; timeoutMs: number } } = {},
) {
  const created: FakeEmulator[] = [];
  const disk = new SyncFileDisk(memoryFile(4096));
  const files = { bios: new ArrayBuffer(1), vgaBios: new ArrayBuffer(1), kernel: new ArrayBuffer(1), initrd: new ArrayBuffer(1), cmdline: 'x', memoryMiB: 64, agentPort: 1, ...(opts.bootState ? { bootState: opts.bootState } : {}) };
  const machine = new Machine({ files, disk, store, wasmPath: 'v86.wasm', watchdog: opts.watchdog ?? false, bootTimeoutMs: 200, releaseEchoMs: 100, createEmulator: fakeEmulatorFactory(created, opts) });
  const statuses: MachineStatus['state'][] = [];
  machine.onStatus((s) => statuses.push(s.state));
  return { machine, store, created, disk, statuses };
}

describe('Machine lifecycle (fake emulator)', () => {
  it('cold boots without a saved state, then suspends and wakes', async () => {
    const { machine, store, created, statuses } = setup();
    expect(await machine.start()).toBe('booted');
    expect(created[0]!.options.bzimage).toBeDefined();
    expect((await machine.exec({ command: 'echo hi' })).stdout).toBe('hi\n');
    await machine.suspend();
    expect(store.gen.state).toBeTruthy();
    expect(store.gen.disk).toBe(store.gen.state);
    expect(await machine.start()).toBe('woke');
    expect(created[1]!.options.initial_state).toBeDefined();
    expect(created[1]!.guest.received.map((h) => h.type)).toEqual(['ping', 'settime']);
    expect(statuses).toEqual(['off', 'booting', 'ready', 'suspended', 'waking', 'ready']);
  });

  it('has the agent sync the disk and drop the caches before a save; an older agent does it on a shell', async () => {
    const { machine, created } = setup();
    await machine.start();
    await machine.checkpoint();
    const saves = (guest: FakeEmulator['guest']) => guest.received.filter((h) => h.type === 'settle' || h.type === 'exec').map((h) => h.type === 'exec' ? h.command : h.type);
    expect(saves(created[0]!.guest)).toEqual(['settle']);
    created[0]!.guest.settles = false;
    await machine.suspend();
    expect(saves(created[0]!.guest)).toEqual(['settle', 'settle', 'sync; echo 3 > /proc/sys/vm/drop_caches']);
  });

  it('reseeds the guest\'s random generator with fresh host bytes at every start; an older agent has it done by a python3', async () => {
    const { machine, created } = setup();
    await machine.start();
    await machine.suspend();
    await machine.start();
    await machine.suspend();
    await machine.start();
    const seeds = created.map((e) => e.guest.received.find((h) => h.type === 'settime')?.seed as string);
    expect(seeds.map((seed) => atob(seed).length)).toEqual([64, 64, 64]);
    expect(new Set(seeds).size).toBe(3); // two wakes of the same state are seeded apart
    expect(created.flatMap((e) => e.guest.pythonInputs)).toEqual([]);

    const old = setup(memoryStore(), { reseeds: false });
    await old.machine.start();
    await old.machine.suspend();
    expect(await old.machine.start()).toBe('woke');
    const guest = old.created[1]!.guest;
    const seed = guest.received.find((h) => h.type === 'settime')?.seed as string;
    expect(guest.pythonInputs).toEqual([Uint8Array.from(atob(seed), (c) => c.charCodeAt(0))]);
    const reseed = guest.received.find((h) => h.type === 'exec')!;
    expect((reseed.argv as string[]).slice(0, 3)).toEqual(['python3', '-S', '-c']);
    expect((reseed.argv as string[])[3]).toContain('0x5207'); // RNDRESEEDCRNG
  });

  it('a cold boot restores the image\'s boot state and lets it go on with a newline; one that does not answer, or cannot be had, leaves it to the kernel', async () => {
    const held = new ArrayBuffer(16);
    const { machine, created, statuses } = setup(memoryStore(), { bootState: async () => held });
    expect(await machine.start()).toBe('booted');
    expect(created).toHaveLength(1);
    expect(created[0]!.restored).toBe(held);
    // Restored, the state is let go: v86 keeps its options while the emulator lives.
    expect((created[0]!.options.initial_state as { buffer?: ArrayBuffer }).buffer).toBeUndefined();
    expect(created[0]!.options.bzimage).toBeUndefined();
    expect(created[0]!.serialSent).toEqual(['\n']);
    expect(created[0]!.guest.received.map((h) => h.type)).toEqual(['settime']); // seeded, as any boot
    expect(statuses).toEqual(['off', 'booting', 'ready']);
    expect(machine.status).toMatchObject({ state: 'ready', woke: false, phases: { bootState: expect.any(Number), restore: expect.any(Number), agent: expect.any(Number), settime: expect.any(Number) } });
    expect((await machine.exec({ command: 'echo up' })).stdout).toBe('up\n');

    const silent = setup(memoryStore(), { bootState: held, held: false });
    expect(await silent.machine.start()).toBe('booted');
    expect(silent.created.map((e) => (e.options.bzimage ? 'kernel' : 'held'))).toEqual(['held', 'kernel']);

    const missing = setup(memoryStore(), { bootState: () => Promise.reject(new Error('offline')) });
    expect(await missing.machine.start()).toBe('booted');
    expect(missing.created.map((e) => (e.options.bzimage ? 'kernel' : 'held'))).toEqual(['kernel']);
  });

  it('cold boots when the disk moved on after the save', async () => {
    const { machine, store, disk, created } = setup();
    await machine.start();
    await machine.suspend();
    disk.set(0, new Uint8Array([1]), () => {}); // a write after the save
    expect(store.gen.disk).toBeNull();
    expect(await machine.start()).toBe('booted');
    expect(created[1]!.options.initial_state).toBeUndefined();
  });

  it('a checkpoint lets the guest run on before its state is written; a disk write meanwhile leaves that state stale', async () => {
    const store = memoryStore();
    let finish = () => {};
    const write = store.writeState.bind(store);
    store.writeState = (state, generation, diskMovedOn) => new Promise<void>((resolve) => (finish = resolve)).then(() => write(state, generation, diskMovedOn));
    const { machine, disk } = setup(store);
    await machine.start();
    const order: string[] = [];
    const saving = machine.checkpoint(
      () => void order.push('copied while stopped'),
      () => void order.push('ran on'),
    );
    await vi.waitFor(() => expect(order).toEqual(['copied while stopped', 'ran on']));
    expect(store.gen.state).toBeNull(); // not written yet
    disk.set(0, new Uint8Array([1]), () => {}); // the guest writes its disk meanwhile
    finish();
    const generation = await saving;
    expect(store.gen).toEqual({ state: generation, disk: null });
  });

  it('a quiet-time save the terminal was typed into while the guest synced is abandoned: nothing written, the guest runs on', async () => {
    const { machine, store } = setup();
    await machine.start();
    const saving = machine.checkpoint(undefined, undefined, { quiet: true });
    machine.sendSerial(new Uint8Array([0x6c])); // a key, while the guest syncs its disk for the save
    await expect(saving).rejects.toMatchObject({ code: 'save_abandoned' });
    expect(store.gen.state).toBeNull();
    expect(machine.status.state).toBe('ready');
    expect((await machine.exec({ command: 'echo hi' })).stdout).toBe('hi\n');
    // Left alone, it saves; a save someone asked for is taken whatever was typed.
    const generation = await machine.checkpoint(undefined, undefined, { quiet: true });
    expect(store.gen.state).toBe(generation);
    const asked = machine.checkpoint();
    machine.sendSerial(new Uint8Array([0x73]));
    const taken = await asked;
    expect(taken).not.toBe(generation);
    expect(store.gen.state).toBe(taken);
  });

  it('a checkpoint with no disk write while its state is written leaves a state the next start wakes from', async () => {
    const { machine, store, created } = setup();
    await machine.start();
    const generation = await machine.checkpoint();
    expect(store.gen).toEqual({ state: generation, disk: generation });
    await machine.shutdown();
    expect(await machine.start()).toBe('woke');
    expect(created[1]!.options.initial_state).toBeDefined();
  });

  it('a checkpoint whose state cannot be written says so, and the computer runs on', async () => {
    const store = memoryStore();
    store.writeState = async () => {
      throw new DOMException('full', 'QuotaExceededError');
    };
    const { machine } = setup(store);
    await machine.start();
    let ranOn = false;
    await expect(machine.checkpoint(undefined, () => (ranOn = true))).rejects.toMatchObject({ code: 'save_failed' });
    expect(ranOn).toBe(true);
    expect(machine.status.state).toBe('ready');
    expect((await machine.exec({ command: 'echo hi' })).stdout).toBe('hi\n');
  });

  describe('memory', () => {
    useArrayBufferTransfer();
    it("gives a saved state's memory back once it is written, but not one a caller of the checkpoint holds, nor a restored one (the browser's buffer)", async () => {
      const { machine, store } = setup();
      const written: ArrayBuffer[] = [];
      const write = store.writeState.bind(store);
      store.writeState = async (state, generation, diskMovedOn) => {
        written.push(state);
        await write(state, generation, diskMovedOn);
      };
      expect(await machine.start()).toBe('booted');
      await machine.checkpoint();
      expect(written[0]!.byteLength).toBe(0);
      let held: ArrayBuffer | undefined;
      await machine.checkpoint(undefined, (_generation, state) => (held = state));
      expect(held!.byteLength).toBeGreaterThan(0);
      await machine.suspend();
      expect(written[2]!.byteLength).toBe(0);
      const read: ArrayBuffer[] = [];
      const readState = store.readState.bind(store);
      store.readState = async () => {
        const state = (await readState())!;
        read.push(state);
        return state;
      };
      expect(await machine.start()).toBe('woke');
      expect(read[0]!.byteLength).toBeGreaterThan(0); // dropped, not detached: see let-go.ts
      expect((await machine.exec({ command: 'echo hi' })).stdout).toBe('hi\n');
    });
  });

  it('reports a boot that never reaches the agent as an error with a reboot offer', async () => {
    const { machine } = setup(memoryStore(), { silent: true });
    await expect(machine.start()).rejects.toMatchObject({ code: 'boot_failed' });
    expect(machine.status).toMatchObject({ state: 'error', canReboot: true });
  });

  it('the watchdog reports a computer that stopped answering', async () => {
    const { machine, created } = setup(memoryStore(), { watchdog: { intervalMs: 20, timeoutMs: 30 } });
    await machine.start();
    created[0]!.guest.send = () => {};
    await new Promise((r) => setTimeout(r, 1200));
    expect(machine.status).toMatchObject({ state: 'error', message: 'the computer stopped answering', canReboot: true });
  });
});
