// BOOTS THE REAL IMAGE in v86 under Node (slow: disk fill ~20 s, cold boot 16–40 s, the first
// Node start 20–50 s). One machine is shared by the tests in order; skipped without an image.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFully, SyncFileDisk, type SyncFile } from './disk.ts';
import { Machine } from './machine.ts';
import type { MachineBootFiles, MachineStore, MachineWorkspace } from './machine-contract.ts';
import { createNodeMachineStore, loadNodeImage, nodeV86Wasm, openNodeSyncFile } from './node-file.ts';
import { nodeWorkspaceFs } from './node-workspace-fs.ts';
import type { Workspace9pSnapshot } from './workspace-9p-snapshot.ts';
import { V86_WASM_PATH } from './testing/v86-emulator.ts';

const IMAGE_DIR = join(import.meta.dirname, '..', 'vm-images', 'out', 'latest');
const v86Wasm = nodeV86Wasm(V86_WASM_PATH);
const now = () => performance.now();
/** The file as read, with the guest's writes kept in memory (512-byte sectors, as v86 writes). */
function copyOnWrite(base: SyncFile): SyncFile {
  const written = new Map<number, Uint8Array>();
  return {
    size: base.size,
    read(buffer, at) {
      readFully(base, buffer, at);
      for (let sector = Math.floor(at / 512); sector * 512 < at + buffer.length; sector++) {
        const mine = written.get(sector);
        if (!mine) continue;
        const from = Math.max(at, sector * 512);
        const to = Math.min(at + buffer.length, sector * 512 + 512);
        buffer.set(mine.subarray(from - sector * 512, to - sector * 512), from - at);
      }
      return buffer.length;
    },
    write(bytes, at) {
      if (at % 512 || bytes.length % 512) throw new Error('a write that is not whole sectors');
      for (let off = 0; off < bytes.length; off += 512) written.set((at + off) / 512, bytes.slice(off, off + 512));
      return bytes.length;
    },
    flush: () => {},
    truncate: () => {},
    close: () => {},
  };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe.skipIf(!existsSync(join(IMAGE_DIR, 'manifest.json')) || process.env.STACKDOCS_SKIP_VM_BOOT === '1')('Machine on the real image (boots v86)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vm-machine-'));
  const diskPath = join(dir, 'disk.img');
  let files: MachineBootFiles;
  let store: MachineStore;
  let file: SyncFile;
  let machine: Machine;
  const numbers: Record<string, number> = {};
  // /workspace: a folder on the host, served to the guest by the 9p share (as the VM worker does).
  const workspaceDir = join(dir, 'workspace');
  mkdirSync(workspaceDir);
  let share: Workspace9pSnapshot | null = null;
  const workspace: MachineWorkspace = {
    fs: nodeWorkspaceFs(workspaceDir),
    read: async () => share,
    write: async (snapshot) => {
      share = snapshot;
    },
  };

  const newMachine = () => {
    file = openNodeSyncFile(diskPath);
    return new Machine({ files, disk: new SyncFileDisk(file), store, wasmPath: V86_WASM_PATH, wasmFn: v86Wasm, watchdog: false, workspace });
  };

  beforeAll(async () => {
    ({ files } = await loadNodeImage(IMAGE_DIR, diskPath));
    store = createNodeMachineStore(join(dir, 'vm'));
    machine = newMachine();
    const t = now();
    expect(await machine.start()).toBe('booted');
    numbers.coldBootMs = now() - t;
  }, 400_000);

  afterAll(async () => {
    await machine?.shutdown();
    rmSync(dir, { recursive: true, force: true }); // a 2 GiB disk file, ~3 GB with the state
    console.log(`machine numbers ${JSON.stringify(Object.fromEntries(Object.entries(numbers).map(([k, v]) => [k, Math.round(v)])))}`);
  });

  it('is ready, with the guest clock set', async () => {
    expect(machine.status.state).toBe('ready');
    const r = await machine.exec({ argv: ['date', '+%s'] });
    expect(Math.abs(Number(r.stdout) - Date.now() / 1000)).toBeLessThan(10);
  });

  it('measures round trips and python warm vs cold', async () => {
    const rtts: number[] = [];
    for (let i = 0; i < 9; i++) {
      const t = now();
      await machine.exec({ argv: ['/bin/true'] });
      rtts.push(now() - t);
    }
    numbers.execArgvTrueP50Ms = median(rtts);
    const pings: number[] = [];
    for (let i = 0; i < 9; i++) {
      const t = now();
      await machine.agent!.ping();
      pings.push(now() - t);
    }
    numbers.pingP50Ms = median(pings);
    let t = now();
    expect((await machine.exec({ command: "python3 -c 'print(6*7)'" })).stdout).toBe('42\n');
    numbers.pythonColdMs = now() - t;
    await machine.exec({ python: 'print(1)' }); // the runner may still be starting
    t = now();
    const warm = await machine.exec({ python: 'print(6*7)' });
    numbers.pythonWarmMs = now() - t;
    expect(warm.stdout).toBe('42\n');
  }, 120_000);

  it('has /workspace mounted from the host (9p)', async () => {
    // pip installing a wheel from there, offline, runs in the e2e (stack-file.spec.ts), as pandas's
    // first import does (computer.spec.ts): each costs 1-2 minutes of the emulator's time.
    expect((await machine.exec({ command: 'grep " /workspace " /proc/mounts' })).stdout).toMatch(/^host9p \/workspace 9p /);
  });

  it('runs Node offline, and npm knows it may not wait on a dead network', async () => {
    // This machine has no network card at all: node -e and npm's own commands must not need one.
    const t = now();
    const node = await machine.exec({ command: `node -e 'console.log("NODE=" + process.version + " " + [1, 2, 3].map((n) => n * 2).join(","))'`, timeout: 120 });
    numbers.nodeColdMs = now() - t;
    expect(node.code, node.stderr).toBe(0);
    expect(node.stdout).toMatch(/^NODE=v18\.\d+\.\d+ 2,4,6\n$/);
    // npm's settings, read where npm reads them (its built-in npmrc names the global one) rather
    // than by starting npm: that alone takes 60-120 s in the emulator. npm itself runs in the
    // e2e (computer.spec: an install from a registry through the proxy).
    const config = await machine.exec({ command: "grep -E '^(fetch-retries|fetch-retry-maxtimeout|update-notifier)=' \"$(sed -n 's/^globalconfig=//p' /usr/share/nodejs/npm/npmrc)\"" });
    expect(config.code, config.stderr).toBe(0);
    expect(config.stdout).toBe('fetch-retries=1\nfetch-retry-maxtimeout=3000\nupdate-notifier=false\n');
  }, 400_000);

  it('serves /workspace straight from the host folder, both ways', async () => {
    const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    mkdirSync(join(workspaceDir, 'documents'));
    const big = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 2654435761) >>> 24);
    writeFileSync(join(workspaceDir, 'documents', 'scan.bin'), big);
    writeFileSync(join(workspaceDir, 'notes.txt'), 'from the host\n');
    const ls = await machine.exec({ command: 'ls -la /workspace /workspace/documents && sha256sum /workspace/documents/scan.bin && df -k /workspace | tail -1' });
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/notes\.txt/);
    expect(ls.stdout).toContain(`${sha(big)}  /workspace/documents/scan.bin`);
    // The guest's writes, folders, renames and removals are in the folder when the command ends.
    const made = await machine.exec({
      command: [
        'cd /workspace',
        "printf '#!/bin/sh\\necho ran here\\n' > run.sh && chmod +x run.sh && ./run.sh",
        'mkdir -p out/deep && seq 1 100000 > out/deep/n.txt && mv out/deep out/kept && rm notes.txt',
        "python3 -c \"open('/workspace/out/py.txt','w').write('py'); print(open('/workspace/out/kept/n.txt').read().count(chr(10)))\"",
        'stat -c %a run.sh',
      ].join(' && '),
    });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe('ran here\n100000\n755\n');
    expect(existsSync(join(workspaceDir, 'notes.txt'))).toBe(false);
    expect(readFileSync(join(workspaceDir, 'out', 'kept', 'n.txt'), 'utf8').split('\n')).toHaveLength(100001);
    expect(readFileSync(join(workspaceDir, 'out', 'py.txt'), 'utf8')).toBe('py');
    // Not kept here: links and device nodes.
    expect((await machine.exec({ command: 'ln -s run.sh /workspace/link' })).code).not.toBe(0);
    // The system space of the stack is not the guest's to see or make.
    mkdirSync(join(workspaceDir, '.os'), { recursive: true });
    expect((await machine.exec({ command: 'ls -A /workspace' })).stdout).not.toMatch(/\.os/);
    expect((await machine.exec({ command: 'mkdir /workspace/.os' })).code).not.toBe(0);
  }, 300_000);

  it('kills a runaway command at its timeout', async () => {
    const r = await machine.exec({ command: 'sleep 100', timeout: 2 });
    expect(r).toMatchObject({ timedOut: true, code: null, signal: 'SIGKILL' });
    expect(r.durationMs).toBeLessThan(10_000);
  }, 60_000);

  it('cancel kills the whole process group', async () => {
    const ac = new AbortController();
    let pid = 0;
    const run = machine.exec({ command: 'sleep 300 & sleep 300 & wait' }, { signal: ac.signal, onStarted: (s) => (pid = s.pid) });
    await new Promise((r) => setTimeout(r, 1500));
    ac.abort();
    const r = await run;
    expect(r.cancelled).toBe(true);
    expect(pid).toBeGreaterThan(0);
    // Zombies (state Z) are dead, only waiting for init to reap them after the reparenting.
    const left = await machine.exec({ command: `awk '$5 == ${pid} && $3 != "Z"' /proc/[0-9]*/stat 2>/dev/null` });
    expect(left.stdout).toBe('');
  }, 60_000);

  it('moves 10 MB host -> VM through stdin', async () => {
    const input = new Uint8Array(10 * 1024 * 1024).fill(0x61);
    const t = now();
    const r = await machine.exec({ command: 'wc -c', input });
    numbers.stdin10MBMs = now() - t;
    expect(r.stdout?.trim()).toBe(String(input.length));
  }, 300_000);

  it('suspends; two wakes of that state draw different random numbers; wakes in a new emulator with the same disk', async () => {
    await machine.exec({ command: 'echo before-save > /root/marker' });
    // A process whose working folder is in /workspace holds the share across the save.
    await machine.exec({ command: 'mkdir -p /workspace/kept && cd /workspace/kept && setsid sh -c "sleep 100000" </dev/null >/dev/null 2>&1 &' });
    let t = now();
    await machine.suspend();
    numbers.suspendMs = now() - t;
    expect(machine.status.state).toBe('suspended');
    file.close();
    const gen = await store.readGeneration();
    expect(gen.state).toBeTruthy();
    expect(gen.disk).toBe(gen.state);

    // Every user's first start wakes one image, and a checkpoint can be restored twice: each wake
    // must draw its own random bytes (the kernel's, and those of the warm Python runner's and the
    // spare shell's children, forked before the save). Each wake runs on a copy-on-write view.
    const state = (await store.readState())!;
    const draws: string[] = [];
    for (let n = 0; n < 2; n++) {
      const base = openNodeSyncFile(diskPath);
      const woken = new Machine({
        files,
        disk: new SyncFileDisk(copyOnWrite(base)),
        store: { ...store, readState: async () => state.slice(0), readGeneration: async () => gen, writeState: async () => {}, markDiskDirty: () => {} },
        wasmPath: V86_WASM_PATH,
        wasmFn: v86Wasm,
        watchdog: false,
      });
      try {
        expect(await woken.start()).toBe('woke');
        const python = await woken.exec({ python: 'import os, random; print(os.urandom(16).hex(), random.random())' });
        const shell = await woken.exec({ command: 'echo $RANDOM $(head -c 16 /dev/urandom | od -An -tx1 | tr -d " \\n")' });
        draws.push(`${python.stdout!.trim()} ${shell.stdout!.trim()}`);
      } finally {
        await woken.shutdown();
        base.close();
      }
    }
    const [first, second] = draws.map((d) => d.split(' '));
    expect(first).toHaveLength(4);
    for (let i = 0; i < 4; i++) expect(second![i], `draw ${i} of ${draws.join(' / ')}`).not.toBe(first![i]);

    machine = newMachine();
    t = now();
    expect(await machine.start()).toBe('woke');
    numbers.wakeMs = now() - t;
    const r = await machine.exec({ command: 'cat /root/marker; date +%s' });
    const [marker, clock] = r.stdout!.split('\n');
    expect(marker).toBe('before-save');
    expect(Math.abs(Number(clock) - Date.now() / 1000)).toBeLessThan(10);
    // The share the guest held is served again: the sleeping process's folder, and new files.
    writeFileSync(join(workspaceDir, 'kept', 'after-wake.txt'), 'hello again');
    const held = await machine.exec({ command: 'ls "$(readlink /proc/$(pgrep -f "sleep 100000" | head -1)/cwd)" && cat /workspace/kept/after-wake.txt && echo ok > /workspace/kept/w.txt' });
    expect(held.code, held.stderr).toBe(0);
    expect(held.stdout).toBe('after-wake.txt\nhello again');
    expect(readFileSync(join(workspaceDir, 'kept', 'w.txt'), 'utf8')).toBe('ok\n');
  }, 180_000);

  it('a disk that moved on after the save forces a cold boot', async () => {
    await machine.exec({ command: 'echo after > /root/after; sync' });
    const gen = await store.readGeneration();
    expect(gen.disk).toBeNull(); // the write after the wake invalidated the saved state
    await machine.shutdown();
    file.close();
    machine = newMachine();
    const t = now();
    expect(await machine.start()).toBe('booted');
    numbers.secondColdBootMs = now() - t;
    expect((await machine.exec({ command: 'cat /root/after /root/marker' })).stdout).toBe('after\nbefore-save\n');
  }, 300_000);
});
