// Boots the built image in v86 under Node, exercises the guest agent, saves the machine state,
// wakes a fresh emulator from it and prints the timings.
// It speaks to the agent with the app's own client (vm/agent-client.ts), hence tsx.
// Usage: npx tsx vm-images/smoke.mjs [IMAGE_DIR]   (default: vm-images/out/latest)
import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, ftruncateSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { V86 } from '../node_modules/v86/build/libv86.mjs';
import { AgentClient } from '../vm/agent-client.ts';
import { FileDisk } from './host/file-disk.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const imageDir = resolve(process.argv[2] ?? join(here, 'out', 'latest'));
const workDir = join(here, 'out', 'smoke');
const manifest = JSON.parse(readFileSync(join(imageDir, 'manifest.json'), 'utf8'));
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const now = () => performance.now();
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
const results = {};
const failures = [];

function check(name, ok, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures.push(name);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Reads a boot file named by the manifest, checking its hash; returns a fresh ArrayBuffer. */
function bootFile(role) {
  const entry = manifest.files[role];
  const bytes = readFileSync(join(imageDir, entry.file));
  if (sha256(bytes) !== entry.sha256) throw new Error(`${entry.file}: sha256 mismatch`);
  return new Uint8Array(bytes).buffer;
}

/** Rebuilds the raw disk from the chunks, as the browser will: absent chunks stay zero. */
function assembleDisk(path) {
  const { size, chunkSize, chunks } = manifest.disk;
  const fd = openSync(path, 'w');
  ftruncateSync(fd, size);
  for (const chunk of chunks) {
    const bytes = gunzipSync(readFileSync(join(imageDir, chunk.file)));
    if (bytes.length !== chunkSize || sha256(bytes) !== chunk.sha256) {
      throw new Error(`chunk ${chunk.index} (${chunk.file}) does not match the manifest`);
    }
    writeSync(fd, bytes, 0, bytes.length, chunk.index * chunkSize);
  }
  closeSync(fd);
}

/** Types a line into the serial console (the user's terminal) and waits for `expect` to echo back. */
function serialRoundTrip(emulator, line, expect, ms) {
  let seen = '';
  return withTimeout(new Promise((resolve) => {
    emulator.add_listener('serial0-output-byte', (byte) => {
      seen += String.fromCharCode(byte);
      if (seen.includes(expect)) resolve(seen);
    });
    emulator.serial0_send(line + '\n');
  }), ms, `serial console answer ${expect}`);
}

function startEmulator(options, serialLog) {
  const emulator = new V86({
    wasm_path: join(here, '..', 'node_modules', 'v86', 'build', 'v86.wasm'),
    memory_size: manifest.memoryMiB * 1024 * 1024,
    bios: { buffer: bootFile('bios') },
    vga_bios: { buffer: bootFile('vgaBios') },
    virtio_console: true,
    autostart: true,
    disable_keyboard: true,
    disable_mouse: true,
    disable_speaker: true,
    ...options,
  });
  emulator.add_listener('serial0-output-byte', (byte) => serialLog.write(Buffer.from([byte])));
  return emulator;
}

/** The agent's virtio-console port of `emulator` as the client's byte transport. */
function agentTransport(emulator, port) {
  return {
    send: (bytes) => emulator.bus.send(`virtio-console${port}-input-bytes`, bytes),
    onBytes: (listener) => {
      emulator.add_listener(`virtio-console${port}-output-bytes`, listener);
      return () => emulator.remove_listener(`virtio-console${port}-output-bytes`, listener);
    },
  };
}

async function timed(fn) {
  const start = now();
  const value = await fn();
  return { value, ms: now() - start };
}

/** Splits the cold boot into phases from the guest's own timestamps (dmesg, the agent log). */
async function reportBootPhases(client, ready) {
  const { stdout } = await client.exec({ command: 'dmesg; cat /run/stackdocs-agent.log' });
  const at = (pattern) => {
    const line = stdout.split('\n').find((l) => pattern.test(l));
    return line ? Number(line.match(/^\[\s*([\d.]+)\]/)[1]) : NaN;
  };
  const marks = [
    ['BIOS + kernel decompression', 0],
    ['kernel', at(/Run \/init as init process/)],
    ['initramfs', at(/initramfs: .* mounted/)],
    ['init + rc.sysinit', at(/rc\.sysinit: done/)],
    ['python start', Number(stdout.match(/imports began at ([\d.]+)/)?.[1])],
    ['agent imports', at(/stackdocs agent \d/)],
    ['agent ready', ready.uptime],
  ];
  results.bootBeforeKernelMs = results.coldBootToAgentMs - ready.uptime * 1000;
  const parts = [`BIOS + kernel decompression ${seconds(results.bootBeforeKernelMs)}`];
  for (let i = 1; i < marks.length; i++) {
    const ms = (marks[i][1] - marks[i - 1][1]) * 1000;
    results[`phase ${marks[i][0]}`] = ms;
    parts.push(`${marks[i][0]} ${seconds(ms)}`);
  }
  console.log(`     boot phases: ${parts.join(', ')}`);
}

async function exerciseAgent(client) {
  const pandas = await timed(() =>
    client.exec({ command: "python3 -c 'import pandas; print(pandas.__version__)'" }));
  results.pandasColdMs = pandas.ms;
  check('python3 -c import pandas', pandas.value.code === 0 && /^\d+\.\d+/.test(pandas.value.stdout),
    `${pandas.value.stdout.trim()} in ${seconds(pandas.ms)}`);

  const rtts = [];
  for (let i = 0; i < 10; i++) rtts.push((await timed(() => client.exec({ command: 'true' }))).ms);
  rtts.sort((a, b) => a - b);
  results.execTrueMedianMs = rtts[5];
  check('exec true', true, `median ${rtts[5].toFixed(1)} ms, min ${rtts[0].toFixed(1)} ms (bash -c)`);
  const argvTrue = await timed(() => client.exec({ argv: ['/bin/true'] }));
  results.execArgvTrueMs = argvTrue.ms;
  const pings = [];
  for (let i = 0; i < 10; i++) pings.push((await timed(() => client.ping())).ms);
  pings.sort((a, b) => a - b);
  results.pingMedianMs = pings[5];
  check('ping', true, `median ${pings[5].toFixed(1)} ms; argv /bin/true ${argvTrue.ms.toFixed(1)} ms`);

  const cold = await timed(() => client.exec({ command: "python3 -c 'print(6*7)'" }));
  const warm = await timed(() => client.exec({ python: 'print(6*7)' }));
  results.pythonColdMs = cold.ms;
  results.pythonWarmMs = warm.ms;
  check('warm python runner', warm.value.stdout === '42\n' && warm.value.runner === 'warm',
    `python3 -c ${cold.ms.toFixed(0)} ms, warm ${warm.ms.toFixed(0)} ms`);
  const warmPandas = await timed(() =>
    client.exec({ python: 'import pandas, sys; print(pandas.__version__, sys.argv)', args: ['x'] }));
  results.pandasWarmRunnerMs = warmPandas.ms;
  check('warm runner import pandas', warmPandas.value.code === 0, `${warmPandas.value.stdout.trim()} in ${seconds(warmPandas.ms)}`);

  const input = new Uint8Array(200 * 1024).map((_, i) => (i * 7919) % 251);
  const stdin = await timed(() => client.exec({
    python: 'import sys, hashlib; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())', input,
  }));
  results.stdin200KiBMs = stdin.ms;
  check('stdin 200 KiB through acknowledged frames', stdin.value.stdout.trim() === sha256(input), seconds(stdin.ms));

  const out = await timed(() => client.exec({ command: 'head -c 10000000 /dev/zero' }));
  results.stdout10MBMs = out.ms;
  check('stdout 10 MB', out.value.stdout.length === 10000000, seconds(out.ms));

  const parallel = await timed(() => Promise.all([1, 2, 3].map((n) =>
    client.exec({ command: `sleep 1; echo ${n}` }))));
  check('three execs at once', parallel.value.map((r) => r.stdout.trim()).join() === '1,2,3' && parallel.ms < 2500,
    seconds(parallel.ms));

  const long = client.exec({ command: 'sleep 60 & sleep 60; echo never' }, { id: 'long' });
  await new Promise((r) => setTimeout(r, 300));
  client.cancel('long');
  const cancelled = await long;
  check('cancel kills the process group', cancelled.cancelled && cancelled.signal === 'SIGKILL');
  // Killed children are reparented to init until it reaps them: count live ones only.
  const left = await client.exec({ command: "sleep 0.2; ps -eo stat=,comm= | awk '$2 == \"sleep\" && $1 !~ /^Z/' | wc -l" });
  check('no sleep left after cancel', left.stdout.trim() === '0', `live sleeps: ${left.stdout.trim()}`);

  const timeout = await client.exec({ python: 'import time; time.sleep(30)', timeout: 1 });
  check('timeout', timeout.timedOut && timeout.signal === 'SIGKILL', `${timeout.durationMs} ms`);

  const env = await client.exec({ command: 'cd; pwd; echo "$GREETING"', cwd: '/tmp', env: { GREETING: 'hello' } });
  check('cwd and env', env.stdout === '/root\nhello\n');
  const badCwd = await client.exec({ command: 'true', cwd: '/nonexistent' }).catch((e) => e);
  check('bad cwd is an error frame', badCwd.code === 'bad_cwd');

  const big = 'x = ' + JSON.stringify('y'.repeat(20000)) + '\nprint(len(x))';
  const chunked = await client.exec({ python: big });
  check('request larger than one frame (chunked)', chunked.stdout === '20000\n');

  const libs = await client.exec({
    python: 'import numpy, openpyxl, matplotlib, pypdf, pdfminer, sqlite3; print("ok")',
  });
  check('document libraries import', libs.stdout === 'ok\n', libs.stderr.trim().split('\n').pop());
}

async function main() {
  mkdirSync(workDir, { recursive: true });
  const diskPath = join(workDir, 'disk.img');
  const assembled = await timed(async () => assembleDisk(diskPath));
  console.log(`image ${manifest.recipeHash}: disk assembled from ${manifest.disk.chunks.length} chunks in ${seconds(assembled.ms)}`);

  // Cold boot.
  const serialLog = createWriteStream(join(workDir, 'serial.log'));
  let disk = new FileDisk(diskPath);
  const bootStart = now();
  let emulator = startEmulator({
    bzimage: { buffer: bootFile('kernel') },
    initrd: { buffer: bootFile('initrd') },
    cmdline: manifest.cmdline,
    hda: disk,
  }, serialLog);
  let client = new AgentClient(agentTransport(emulator, manifest.agent.virtioConsolePort), { awaitReady: true });
  const ready = await withTimeout(client.waitReady(), 180000, 'agent ready after cold boot');
  results.coldBootToAgentMs = now() - bootStart;
  check('cold boot to agent ready', true, seconds(results.coldBootToAgentMs));
  const bootId = ready.bootId;
  await reportBootPhases(client, ready);

  await withTimeout(exerciseAgent(client), 300000, 'agent exercises');
  const serial = await serialRoundTrip(emulator, 'echo "shell-$((6*7)) $HOME $(tty) $(pwd)"', 'shell-42 /root /dev/ttyS0 /root', 30000);
  check('root shell on the serial console', !serial.includes('no job control'));

  // Pre-import the heavy libraries into the warm runner: saved in the state, they make every
  // later snippet's `import pandas` nearly free after a wake.
  const preload = await timed(() => client.preload(['numpy', 'pandas']));
  results.preloadPandasMs = preload.ms;
  const preloaded = await timed(() => client.exec({ python: 'import pandas; print(pandas.__version__)' }));
  results.pandasAfterPreloadMs = preloaded.ms;
  check('preload numpy and pandas', preload.value.loaded?.length === 2 && preloaded.value.code === 0,
    `preload ${seconds(preload.ms)}, then a snippet importing pandas ${preloaded.ms.toFixed(0)} ms`);

  // Save: a file written now must survive; drop the page cache so the state is small.
  await client.exec({ command: 'echo before-save > /root/marker && sync && echo 3 > /proc/sys/vm/drop_caches' });
  const saved = await timed(() => emulator.save_state());
  const state = saved.value;
  writeFileSync(join(workDir, 'state.bin'), new Uint8Array(state));
  results.saveStateMs = saved.ms;
  results.stateBytes = state.byteLength;
  results.stateGzipBytes = gzipSync(new Uint8Array(state), { level: 6 }).length;
  check('save_state', true, `${(state.byteLength / 2 ** 20).toFixed(1)} MiB ` +
    `(${(results.stateGzipBytes / 2 ** 20).toFixed(1)} MiB gzip) in ${results.saveStateMs.toFixed(0)} ms`);
  await emulator.destroy();
  disk.close();

  // Wake: a fresh emulator from the state and the same disk.
  disk = new FileDisk(diskPath);
  const wakeStart = now();
  emulator = startEmulator({ initial_state: { buffer: state }, hda: disk }, serialLog);
  client = new AgentClient(agentTransport(emulator, manifest.agent.virtioConsolePort), { awaitReady: false });
  await withTimeout(new Promise((r) => emulator.add_listener('emulator-started', r)), 60000, 'emulator started');
  results.wakeEmulatorMs = now() - wakeStart;
  const pong = await withTimeout(client.ping(), 30000, 'ping after wake');
  results.wakeToPingMs = now() - wakeStart;
  await client.settime(Date.now());
  const first = await withTimeout(client.exec({ command: 'cat /root/marker; date +%s' }), 30000, 'exec after wake');
  results.wakeToFirstExecMs = now() - wakeStart;
  check('wake keeps the running system', pong.bootId === bootId, `boot id ${pong.bootId}`);
  check('wake to first exec', first.stdout.startsWith('before-save\n'),
    `emulator ${results.wakeEmulatorMs.toFixed(0)} ms, ping ${results.wakeToPingMs.toFixed(0)} ms, exec ${results.wakeToFirstExecMs.toFixed(0)} ms`);
  const clock = Number(first.stdout.split('\n')[1]);
  check('clock set after wake', Math.abs(clock - Date.now() / 1000) < 5);
  const warmAfterWake = await timed(() => client.exec({ python: 'print(1)' }));
  results.pythonWarmAfterWakeMs = warmAfterWake.ms;
  check('warm python after wake', warmAfterWake.value.stdout === '1\n', `${warmAfterWake.ms.toFixed(0)} ms`);
  const pandasAfterWake = await timed(() =>
    client.exec({ python: 'import pandas; print(pandas.DataFrame({"a": [1, 2]}).a.sum())' }));
  results.pandasSnippetAfterWakeMs = pandasAfterWake.ms;
  check('pandas snippet after wake', pandasAfterWake.value.stdout === '3\n', `${pandasAfterWake.ms.toFixed(0)} ms`);

  await emulator.destroy();
  disk.close();
  serialLog.end();
  console.log('\nresults ' + JSON.stringify(Object.fromEntries(
    Object.entries(results).map(([k, v]) => [k, Math.round(v * 10) / 10]))));
  if (failures.length) {
    console.log(`\n${failures.length} check(s) failed: ${failures.join(', ')}`);
    process.exit(1);
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(`smoke test failed: ${err.stack ?? err}`);
  console.error(`serial console log: ${join(workDir, 'serial.log')}`);
  process.exit(1);
});
