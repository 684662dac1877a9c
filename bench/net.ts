// net.*: the computer's network through the real proxy (Miniflare) and its Wisp relay, the guest
// in v86 under Node as in the browser's VM worker, with the VM worker's network link. The
// "internet" is tests/support/test-internet.ts on this machine's own address. Reported beside
// the host's own fetch of the same file, and a pip install from the index beside the same install
// from the wheel on the guest's disk, measured in the same run. Needs the built image.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startLocalProxy } from '../cloudflare-proxy/local.mjs';
import { startTestInternet } from '../tests/support/test-internet.ts';
import { SyncFileDisk } from '../vm/disk.ts';
import { Machine } from '../vm/machine.ts';
import type { VmNetwork } from '../vm/network.ts';
import { installNetworkLink } from '../vm/network-link.ts';
import { createNodeMachineStore, loadNodeImage, nodeV86Wasm, openNodeSyncFile } from '../vm/node-file.ts';
import { report, round, summarise } from './stats.ts';

const ROOT = join(import.meta.dirname, '..');
const IMAGE_DIR = join(ROOT, 'vm-images', 'out', 'latest');
const WASM_PATH = join(ROOT, 'node_modules', 'v86', 'build', 'v86.wasm');
const MB = 1024 * 1024;

export async function benchNet(): Promise<void> {
  if (!existsSync(join(IMAGE_DIR, 'manifest.json'))) {
    console.error('net.* skipped: no image is built (bash vm-images/build.sh, as root)');
    return;
  }
  // v86's Wisp adapter opens a WebSocket as a browser would; Node 20 has none of its own.
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  const internet = await startTestInternet();
  const proxy = await startLocalProxy({
    port: 0,
    localPairing: true,
    netAllowedHosts: ['*.index.test'],
    netAllowedPorts: [internet.indexPort],
    netAllowPrivate: [internet.indexHost],
    dnsUpstream: internet.dnsUrl,
  });
  const dir = mkdtempSync(join(tmpdir(), 'net-bench-'));
  let machine: Machine | null = null;
  try {
    const { token } = (await (await fetch(`${proxy.url}/v1/pair/local`, { method: 'POST', body: '{"label":"bench"}' })).json()) as { token: string };
    const ticket = (await (await fetch(`${proxy.url}/v1/net/ticket`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).json()) as { ticket: string };
    const network: VmNetwork = { relayUrl: `${proxy.url.replace(/^http/, 'ws')}/v1/wisp?ticket=${ticket.ticket}`, dnsUrl: `${proxy.url}/dns-query`, ticket: ticket.ticket };
    const link = installNetworkLink(globalThis as never, () => {});
    link.set(network);

    const diskPath = join(dir, 'disk.img');
    const { files } = await loadNodeImage(IMAGE_DIR, diskPath);
    machine = new Machine({ files, disk: new SyncFileDisk(openNodeSyncFile(diskPath)), store: createNodeMachineStore(join(dir, 'vm')), wasmPath: WASM_PATH, wasmFn: nodeV86Wasm(WASM_PATH), watchdog: false, link });
    await machine.coldBoot();
    const run = async (command: string) => {
      const result = await machine!.exec({ command, timeout: 300 });
      if (result.code !== 0) throw new Error(`${command} failed (${result.code}): ${result.stderr || result.stdout}`);
      return result.stdout ?? '';
    };
    const base = `http://pkg.index.test:${internet.indexPort}`;
    // The first lookup and connection warm the path (resolver, relay socket).
    await run(`curl -sS -o /dev/null ${base}/files/hello.txt`);

    // Into the guest's memory (/dev/shm), checked after: the network path alone. The same download
    // onto the guest's disk is reported beside it (the emulated disk and page cache cost the guest
    // CPU too; vm.disk_write measures that path on its own).
    const download = async (path: string) => {
      const out = await run(`curl -sS -o ${path} -w '%{time_total}' ${base}/files/10mb.bin && echo && sha256sum ${path} && rm ${path}`);
      const [seconds, sum] = out.trim().split('\n');
      if (!sum?.startsWith(internet.bigFileSha256)) throw new Error(`the download's sha256 differs: ${sum}`);
      return 10 / Number(seconds);
    };
    const guestMbps: number[] = [];
    const diskMbps: number[] = [];
    const hostMbps: number[] = [];
    for (let i = 0; i < 4; i++) {
      guestMbps.push(await download('/dev/shm/big.bin'));
      diskMbps.push(await download('/tmp/big.bin'));
      const t = performance.now();
      const bytes = new Uint8Array(await (await fetch(`http://${internet.indexHost}/files/10mb.bin`)).arrayBuffer());
      hostMbps.push(bytes.length / MB / ((performance.now() - t) / 1000));
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const guest = mean(guestMbps);
    const host = mean(hostMbps);
    report({ bench: 'net.download_10mb', value: round(guest, 2), unit: 'MB/s', n: guestMbps.length, to_disk_mb_s: round(mean(diskMbps), 2), host_mb_s: round(host, 1), vs_host: round(guest / host, 3), checked: 'sha256 in the guest', goal: '>=5' });

    const firstByte: number[] = [];
    for (let i = 0; i < 20; i++) {
      const out = await run(`curl -sS -o /dev/null -w '%{time_starttransfer}' ${base}/files/hello.txt`);
      firstByte.push(Number(out.trim()) * 1000);
    }
    report(summarise('net.connect_rtt', 'ms', firstByte, { what: 'a new connection to the first byte of a small GET: relay CONNECT, TCP to the server, the reply' }));

    const index: number[] = [];
    const local: number[] = [];
    await run(`curl -sS -o /tmp/tinypkg-1.0-py3-none-any.whl ${base}/packages/tinypkg-1.0-py3-none-any.whl`);
    for (let i = 0; i < 3; i++) {
      let t = performance.now();
      await run(`pip install -q --no-cache-dir --index-url ${base}/simple/ --trusted-host pkg.index.test tinypkg`);
      index.push(performance.now() - t);
      await run('pip uninstall -q -y tinypkg');
      t = performance.now();
      await run('pip install -q --no-cache-dir --no-index /tmp/tinypkg-1.0-py3-none-any.whl');
      local.push(performance.now() - t);
      await run('pip uninstall -q -y tinypkg');
    }
    report({ bench: 'net.pip_install_vs_local', value: round(mean(index) / mean(local), 2), unit: 'ratio', n: index.length, index_ms: Math.round(mean(index)), local_ms: Math.round(mean(local)), goal: '<=1.5' });
  } finally {
    await machine?.shutdown();
    await proxy.dispose();
    await internet.close();
  }
}
