import { describe, expect, it } from 'vitest';
import type { VmApi, VmAvailability, VmNetwork, VmStartOptions, VmStatus } from '../vm/protocol.ts';
import { ComputerUnavailableError, createComputer, type ComputerNetwork } from './computer.ts';
import type { ComputerStatus } from '../protocol/computer.ts';

/** A VmApi that goes through the statuses a real start does, with a clock the test moves. */
function fakeVm(clock: { t: number }, how: 'woke' | 'booted' = 'woke', readyLate = false) {
  const listeners: ((s: VmStatus) => void)[] = [];
  const availability: ((a: VmAvailability) => void)[] = [];
  const calls: string[] = [];
  const emit = (s: VmStatus) => listeners.forEach((l) => l(s));
  const vm: Partial<VmApi> = {
    async subscribeStatus(l) {
      listeners.push(l);
      l({ state: 'off' });
    },
    async subscribeAvailability(l) {
      availability.push(l);
    },
    async makeAvailableOffline(url) {
      calls.push(`download ${url}`);
      const done: VmAvailability = { state: 'complete', chunksDone: 10, chunksTotal: 10, bytesDone: 100, bytesTotal: 100 };
      availability.forEach((l) => l({ ...done, state: 'downloading', chunksDone: 5, bytesDone: 63 }));
      return { ok: true, value: done };
    },
    async subscribeTerminal() {},
    async start() {
      calls.push('start');
      emit({ state: 'downloading', reason: 'first_start', chunksDone: 1, chunksTotal: 4, bytesDone: 50 << 20, bytesTotal: 200 << 20 });
      emit(how === 'woke' ? { state: 'waking' } : { state: 'booting', detail: 'starting' });
      clock.t += how === 'woke' ? 640 : 21_000;
      const ready = () => emit({ state: 'ready', bootId: 'b', woke: how === 'woke' });
      // The status comes by a port of its own: it may arrive after the start's answer.
      if (readyLate) setTimeout(ready, 20);
      else ready();
      return { ok: true, value: how };
    },
    async exec(id, request, onOutput) {
      calls.push(`exec ${id} ${request.command}`);
      // 'é' split across two chunks must still decode as one character.
      const bytes = new TextEncoder().encode('héllo');
      onOutput?.('stdout', bytes.slice(0, 2));
      onOutput?.('stdout', bytes.slice(2));
      return { ok: true, value: { code: 0, signal: null, timedOut: false, cancelled: false, durationMs: 3, stdout: 'héllo' } };
    },
    async cancel(id) {
      calls.push(`cancel ${id}`);
    },
    async workspaceChanged(path) {
      calls.push(`changed ${path}`);
      return { ok: true, value: undefined };
    },
    async suspend() {
      calls.push('suspend');
      emit({ state: 'suspended' });
      return { ok: true, value: undefined };
    },
    async checkpoint(onlyIfChanged) {
      calls.push(`checkpoint ${onlyIfChanged}`);
      return { ok: true, value: undefined };
    },
    async rest() {
      calls.push('rest');
      emit({ state: 'suspended' });
      return { ok: true, value: true };
    },
    async shutdown() {
      calls.push('shutdown');
      emit({ state: 'off' });
    },
  };
  return { vm: vm as VmApi, calls, availability: (a: VmAvailability) => availability.forEach((l) => l(a)), emit };
}

/** A computer whose VM workers are each a fakeVm (`made`), and whose ended workers are listed (`ended`). */
function endingWorkers() {
  const clock = { t: 0 };
  const made: ReturnType<typeof fakeVm>[] = [];
  const ended: VmApi[] = [];
  const computer = createComputer({
    connect: () => (made.push(fakeVm(clock)), made.at(-1)!.vm),
    disconnect: (vm) => ended.push(vm),
    imageBaseUrl: '/vm/h/',
    stackId: 's',
    emit: () => {},
    proxy: (f) => f,
    now: () => clock.t,
  });
  return { computer, made, ended };
}

describe('createComputer', () => {
  it('rests: the computer suspended and its VM worker ended; the next use starts a new one', async () => {
    const { computer, made, ended } = endingWorkers();
    await computer.start();
    expect(await computer.control('rest')).toMatchObject({ state: 'suspended' });
    expect(made[0]!.calls).toEqual(['start', 'rest', 'shutdown']);
    expect(ended).toEqual([made[0]!.vm]);
    // The ended worker's last word ("off") is not heard: the computer stays suspended.
    expect(computer.status).toMatchObject({ state: 'suspended' });
    expect((await computer.exec({ command: 'echo' })).stdout).toBe('héllo');
    expect(made).toHaveLength(2);
    expect(made[1]!.calls).toEqual(['start', 'exec x1 echo'].map((call) => (call.startsWith('exec') ? expect.stringMatching(/^exec x\d+-\w+ echo$/) : call)));
  });

  it('ends the VM worker of a computer that suspended itself after its long quiet, and not after a suspend asked for', async () => {
    const { computer, made, ended } = endingWorkers();
    await computer.start();
    await computer.control('suspend');
    expect(ended).toEqual([]);
    await computer.start();
    made[0]!.emit({ state: 'suspended', idle: true });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(computer.status).toMatchObject({ state: 'suspended' });
    expect(made[0]!.calls.at(-1)).toBe('shutdown');
    expect(ended).toEqual([made[0]!.vm]);
    expect((await computer.exec({ command: 'echo' })).stdout).toBe('héllo');
    expect(made).toHaveLength(2);
  });

  it('starts on first exec, reports progress and how long the wake took', async () => {
    const clock = { t: 0 };
    const { vm, calls } = fakeVm(clock);
    const statuses: ComputerStatus[] = [];
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: (s) => statuses.push(s), proxy: (f) => f, now: () => clock.t });
    const chunks: string[] = [];
    const result = await computer.exec({ command: 'echo hi' }, { onOutput: (_s, text) => chunks.push(text) });
    expect(result.stdout).toBe('héllo');
    expect(chunks.join('')).toBe('héllo');
    expect(statuses.map((s) => s.state)).toEqual(['off', 'downloading', 'waking', 'ready']);
    expect(statuses[1]).toMatchObject({ progress: 0.25, detail: 'Setting up the computer: 50 of 200 MB' });
    expect(statuses.at(-1)).toEqual({ state: 'ready', woke: true, wake_ms: 640 });
    expect(calls.filter((c) => c === 'start')).toHaveLength(1);
    computer.workspaceChanged('documents/a.txt');
    expect(calls).toContain('changed documents/a.txt');
  });

  it('runs a command when the "ready" of its start arrives after the start has answered', async () => {
    const { vm } = fakeVm({ t: 0 }, 'woke', true);
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: () => {}, proxy: (f) => f });
    expect((await computer.exec({ command: 'echo hi' })).stdout).toBe('héllo');
    expect(computer.status.state).toBe('ready');
  });

  it('says how much of its system image this browser holds, and downloads the rest on request without starting', async () => {
    const { vm, calls, availability } = fakeVm({ t: 0 });
    const statuses: ComputerStatus[] = [];
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: (s) => statuses.push(s), proxy: (f) => f, now: () => 0 });
    await computer.start();
    availability({ state: 'downloading', chunksDone: 1, chunksTotal: 10, bytesDone: 20, bytesTotal: 100 });
    expect(statuses.at(-1)).toMatchObject({ state: 'ready', offline: 0.2 });
    // Later statuses keep saying it.
    await computer.control('suspend');
    expect(statuses.at(-1)).toEqual({ state: 'suspended', offline: 0.2 });
    expect(await computer.control('download')).toEqual({ state: 'suspended', offline: 1 });
    expect(statuses.map((s) => s.offline)).toContain(0.63);
    expect(calls).toEqual(['start', 'suspend', 'download /vm/h/']);
  });

  it('save asks a running computer to save what changed, and does not start one', async () => {
    const { vm, calls } = fakeVm({ t: 0 });
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: () => {}, proxy: (f) => f, now: () => 0 });
    expect((await computer.control('save')).state).toBe('off');
    expect(calls).toEqual([]);
    await computer.start();
    await computer.control('save');
    expect(calls).toEqual(['start', 'checkpoint true']);
  });

  it('cancels the command when the signal aborts', async () => {
    const clock = { t: 0 };
    const { vm, calls } = fakeVm(clock);
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: () => {}, proxy: (f) => f, now: () => clock.t });
    await computer.start();
    const controller = new AbortController();
    (vm as { exec: VmApi['exec'] }).exec = async (id) => {
      controller.abort();
      calls.push(`ran ${id}`);
      return { ok: true, value: { code: null, signal: 'SIGKILL', timedOut: false, cancelled: true, durationMs: 1 } };
    };
    const result = await computer.exec({ command: 'sleep 100' }, { signal: controller.signal });
    expect(result.cancelled).toBe(true);
    expect(calls.some((c) => c.startsWith('cancel x'))).toBe(true);
  });

  it('without an image it is unavailable, and exec says so', async () => {
    const statuses: ComputerStatus[] = [];
    const computer = createComputer({ connect: null, imageBaseUrl: null, stackId: 's', emit: (s) => statuses.push(s), proxy: (f) => f });
    expect(computer.status.state).toBe('unavailable');
    await expect(computer.exec({ command: 'ls' })).rejects.toBeInstanceOf(ComputerUnavailableError);
    await expect(computer.exec({ command: 'ls' })).rejects.toThrow('no computer image');
  });

  it('starts with the network it is given, or without one; reports the traffic and whether it runs online', async () => {
    const { vm } = fakeVm({ t: 0 });
    const started: VmStartOptions[] = [];
    const realStart = vm.start.bind(vm);
    vm.start = async (options, onStatus) => (started.push(options), realStart(options, onStatus));
    vm.networkTraffic = async () => ({ sent: 300, received: 9000 });
    const network: VmNetwork = { relayUrl: 'ws://proxy.test/v1/wisp?ticket=t', dnsUrl: 'http://proxy.test/dns-query', ticket: 't' };
    let given: ComputerNetwork = { network: null, offline: 'this device is not paired with the proxy' };
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: () => {}, proxy: (f) => f, network: async () => given });
    // Before it first starts there is no VM worker, and nothing went over the network.
    expect(await computer.networkUse()).toEqual({ sent: 0, received: 0, online: null });

    await computer.start();
    expect(started[0]).toEqual({ imageBaseUrl: '/vm/h/', stackId: 's', network: null, offline: 'this device is not paired with the proxy' });
    expect(await computer.networkUse()).toEqual({ sent: 300, received: 9000, online: false });

    await computer.control('suspend');
    expect(await computer.networkUse()).toMatchObject({ online: null });
    given = { network };
    await computer.start();
    expect(started[1]).toEqual({ imageBaseUrl: '/vm/h/', stackId: 's', network });
    expect(await computer.networkUse()).toEqual({ sent: 300, received: 9000, online: true });
  });

  it('takes a changed network while it runs, with no restart', async () => {
    const { vm, calls } = fakeVm({ t: 0 });
    const set: [VmNetwork | null, string | undefined][] = [];
    vm.setNetwork = async (network, offline) => void set.push([network, offline]);
    vm.networkTraffic = async () => ({ sent: 0, received: 0 });
    const network: VmNetwork = { relayUrl: 'ws://proxy.test/v1/wisp?ticket=t', dnsUrl: 'http://proxy.test/dns-query', ticket: 't' };
    let given: ComputerNetwork = { network };
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: () => {}, proxy: (f) => f, network: async () => given });
    // Never started in this page: nothing to tell (its start asks).
    await computer.networkChanged();
    expect(set).toEqual([]);

    await computer.start();
    given = { network: null, offline: 'its network is turned off for this stack in Settings' };
    await computer.networkChanged();
    expect(set).toEqual([[null, 'its network is turned off for this stack in Settings']]);
    expect(await computer.networkUse()).toMatchObject({ online: false });
    given = { network };
    await computer.networkChanged();
    expect(set.at(-1)).toEqual([network, undefined]);
    expect(await computer.networkUse()).toMatchObject({ online: true });
    expect(calls.filter((c) => c === 'start')).toHaveLength(1);
  });

  it('a start that fails is an error status with a reboot offer, and exec explains it', async () => {
    const { vm } = fakeVm({ t: 0 });
    vm.start = async () => ({ ok: false, error: { code: 'image_fetch_failed', message: 'could not fetch the image (offline?)' } });
    const computer = createComputer({ connect: () => vm, imageBaseUrl: '/vm/h/', stackId: 's', emit: () => {}, proxy: (f) => f });
    await expect(computer.exec({ command: 'ls' })).rejects.toThrow('The computer could not start: could not fetch the image (offline?)');
    expect(computer.status).toEqual({ state: 'error', message: 'could not fetch the image (offline?)', can_reboot: true });
  });
});
