// vm.*: the computer under Node (v86 runs there as in the browser's worker): cold boot, wake,
// exec round trip, the warm Python runner, /workspace both ways (10 MB, md5-checked) and disk
// writes. Uses the built image (vm-images/out/latest); skipped without one.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SyncFileDisk, type SyncFile } from '../vm/disk.ts';
import { Machine } from '../vm/machine.ts';
import type { MachineStore, MachineWorkspace } from '../vm/machine-contract.ts';
import { createNodeMachineStore, loadNodeImage, nodeV86Wasm, openNodeSyncFile } from '../vm/node-file.ts';
import { nodeWorkspaceFs } from '../vm/node-workspace-fs.ts';
import type { Workspace9pSnapshot } from '../vm/workspace-9p-snapshot.ts';
import { percentile, report, round, summarise } from './stats.ts';

const ROOT = join(import.meta.dirname, '..');
const IMAGE_DIR = join(ROOT, 'vm-images', 'out', 'latest');
const WASM_PATH = join(ROOT, 'node_modules', 'v86', 'build', 'v86.wasm');
const v86Wasm = nodeV86Wasm(WASM_PATH);
const now = () => performance.now();
const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

export async function benchVm(): Promise<void> {
  if (!existsSync(join(IMAGE_DIR, 'manifest.json'))) {
    console.error('vm.* skipped: no image is built (bash vm-images/build.sh, as root)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'vm-bench-'));
  const diskPath = join(dir, 'disk.img');
  const { files } = await loadNodeImage(IMAGE_DIR, diskPath);
  const store: MachineStore = createNodeMachineStore(join(dir, 'vm'));
  const workspaceDir = join(dir, 'workspace');
  mkdirSync(join(workspaceDir, 'documents'), { recursive: true });
  mkdirSync(join(workspaceDir, 'artifacts'), { recursive: true });
  // As the VM worker wires it (vm/api/machine-setup.ts): /workspace served from the folder, the guest's
  // fids kept beside each saved state.
  let journal: Workspace9pSnapshot | null = null;
  const workspace: MachineWorkspace = {
    fs: nodeWorkspaceFs(workspaceDir),
    read: async () => journal,
    write: async (snapshot) => {
      journal = snapshot;
    },
  };
  let file: SyncFile = openNodeSyncFile(diskPath);
  const newMachine = () => {
    file = openNodeSyncFile(diskPath);
    return new Machine({ files, disk: new SyncFileDisk(file), store, wasmPath: WASM_PATH, wasmFn: v86Wasm, watchdog: false, workspace });
  };

  let machine = newMachine();
  try {
    let t = now();
    await machine.coldBoot();
    report({
      bench: 'vm.cold_boot',
      value: Math.round(now() - t),
      unit: 'ms',
      n: 1,
      goal: '<10000',
      ...(machine.status.state === 'ready' && machine.status.phases ? { phases: machine.status.phases } : {}),
      note: files.bootState
        ? "as the app boots onto a disk that moved on: the image's boot state (the kernel held before it mounts the disk) restored, to agent ready + clock set; vm.kernel_boot below starts the BIOS and kernel instead"
        : 'kernel start to agent ready + clock set (this image has no boot state)',
    });

    // The agent's bash tool sends `command`s with seconds between them (the model thinks), so
    // each is timed after a pause, when the agent has its spare shell ready; back-to-back calls
    // and a program started by path are reported beside it.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 300));
    const timeExec = async (request: Parameters<Machine['exec']>[0], n: number, idle: boolean) => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        if (idle) await pause();
        t = now();
        const result = await machine.exec(request);
        times.push(now() - t);
        if (result.code !== 0) throw new Error(`exec ${JSON.stringify(request)} failed: ${result.stderr}`);
      }
      return times;
    };
    const pings: number[] = [];
    for (let i = 0; i < 40; i++) {
      t = now();
      await machine.agent!.ping();
      pings.push(now() - t);
    }
    const rtts = await timeExec({ command: 'true' }, 40, true);
    const backToBack = await timeExec({ command: 'true' }, 20, false);
    const byPath = await timeExec({ argv: ['/bin/true'] }, 20, true);
    report(summarise('vm.exec_rtt', 'ms', rtts, {
      goal: '<5',
      command: 'true',
      back_to_back_p50_ms: round(percentile(backToBack, 50)),
      argv_bin_true_p50_ms: round(percentile(byPath, 50)),
      ping_p50_ms: round(percentile(pings, 50)),
    }));

    await machine.exec({ python: 'print(1)' }); // the runner may still be starting
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < 7; i++) {
      await pause();
      t = now();
      await machine.exec({ command: "python3 -c 'print(1)'" });
      cold.push(now() - t);
      await pause();
      t = now();
      await machine.exec({ python: 'print(1)' });
      warm.push(now() - t);
    }
    const coldMs = percentile(cold, 50);
    const warmMs = percentile(warm, 50);
    report({ bench: 'vm.python_warm_speedup', value: round(coldMs / warmMs, 1), unit: 'ratio', n: cold.length, python3_c_ms: Math.round(coldMs), warm_ms: Math.round(warmMs), goal: '>=20' });

    // Host -> VM: the stack worker writes the file; the guest reads it through the 9p share.
    const tenMb = new Uint8Array(10 * 1024 * 1024);
    for (let i = 0; i < tenMb.length; i += 4) tenMb[i] = (i * 2654435761) >>> 24;
    const inTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      writeFileSync(join(workspaceDir, `documents/in${i}.bin`), tenMb);
      await machine.workspaceChanged(`documents/in${i}.bin`);
      t = now();
      const sum = await machine.exec({ command: `md5sum /workspace/documents/in${i}.bin` });
      inTimes.push(now() - t);
      if (!sum.stdout?.startsWith(md5(tenMb))) throw new Error(`host->VM md5 mismatch: ${sum.stdout}`);
    }
    report(summarise('vm.host_to_vm_10mb', 'ms', inTimes, { checked: 'md5 in the guest', note: 'a file the host wrote, read whole by the guest (md5sum) through the 9p share' }));

    // VM -> host: the guest writes a file through the share; it is in the folder when the command ends.
    const outTimes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await machine.exec({ command: `head -c 10485760 /dev/urandom > /tmp/r.bin && md5sum /tmp/r.bin` });
      t = now();
      await machine.exec({ command: `cp /tmp/r.bin /workspace/artifacts/out${i}.bin` });
      outTimes.push(now() - t);
      const got = readFileSync(join(workspaceDir, `artifacts/out${i}.bin`));
      if (!made.stdout?.startsWith(md5(got))) throw new Error('VM->host md5 mismatch');
    }
    report(summarise('vm.vm_to_host_10mb', 'ms', outTimes, { checked: 'md5 on the host', note: 'the guest copies 10 MB into /workspace (cp); the bytes are in the folder when it ends' }));

    const dd = await machine.exec({ command: 'dd if=/dev/zero of=/root/dd.bin bs=1M count=64 conv=fsync 2>&1 | tail -1; rm -f /root/dd.bin' });
    const rate = /([\d.]+) (MB|GB|kB)\/s/.exec(dd.stdout ?? '');
    const mbs = rate ? Number(rate[1]) * (rate[2] === 'GB' ? 1000 : rate[2] === 'kB' ? 0.001 : 1) : NaN;
    report({ bench: 'vm.disk_write', value: mbs, unit: 'MB/s', n: 1, note: 'dd 64 MiB conv=fsync on the system disk', raw: dd.stdout?.trim() });

    // Wake: suspend, then a new emulator from the saved state until the first exec answers.
    const wakes: number[] = [];
    for (let i = 0; i < 4; i++) {
      await machine.suspend();
      file.close();
      machine = newMachine();
      t = now();
      const how = await machine.start();
      await machine.exec({ argv: ['/bin/true'] });
      if (how !== 'woke') throw new Error('the machine cold booted instead of waking');
      wakes.push(now() - t);
    }
    report(summarise('vm.wake', 'ms', wakes, { goal: '<1000', note: 'start() on a saved state to the first exec answered' }));

    if (files.bootState) {
      // The same boot from the BIOS and the kernel, as an image without a boot state boots.
      await machine.shutdown();
      file.close();
      file = openNodeSyncFile(diskPath);
      machine = new Machine({ files: { ...files, bootState: undefined }, disk: new SyncFileDisk(file), store, wasmPath: WASM_PATH, wasmFn: v86Wasm, watchdog: false, workspace });
      t = now();
      await machine.coldBoot();
      report({ bench: 'vm.kernel_boot', value: Math.round(now() - t), unit: 'ms', n: 1, note: 'SeaBIOS, the kernel and its modules to agent ready + clock set (what vm.cold_boot skips)' });
    }
  } finally {
    await machine.shutdown();
    file.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
