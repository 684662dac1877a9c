// The real guest agent (vm-images/agent), run on this machine over a pseudo-terminal, driven by
// the real AgentClient: its spare shell and warm Python runner, without booting the VM. The
// emulator's own figures are in machine.boot.test.ts and bench/vm.ts.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from './agent-client.ts';

const AGENT_DIR = join(import.meta.dirname, '..', 'vm-images', 'agent');
const hasPython = spawnSync('python3', ['-c', 'import sys; assert sys.version_info >= (3, 9)']).status === 0;
const idle = (ms = 300) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!hasPython)('the guest agent, on this machine', () => {
  let bridge: ChildProcessWithoutNullStreams;
  let client: AgentClient;
  let log = '';
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-host-'));
    // A copy: Python writes __pycache__ beside the modules, and the image recipe hashes that folder.
    cpSync(AGENT_DIR, join(dir, 'agent'), { recursive: true });
    bridge = spawn('python3', [join(import.meta.dirname, 'testing', 'agent-on-host.py'), join(dir, 'agent')]);
    bridge.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    client = new AgentClient({
      send: (bytes) => bridge.stdin.write(bytes),
      onBytes: (listener) => {
        const forward = (chunk: Buffer) => listener(new Uint8Array(chunk));
        bridge.stdout.on('data', forward);
        return () => bridge.stdout.off('data', forward);
      },
    });
    await client.waitReady(10_000);
  });

  afterAll(() => {
    bridge?.stdin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  const onSpare = async (request: { command: string; env?: Record<string, string | null> }) => {
    const r = await client.exec({ ...request, command: `${request.command}; grep -qa 'exec 4[<]&-' /proc/$$/cmdline && echo spare || echo fresh`, cwd: dir });
    return r.stdout!.trim().split('\n').at(-1);
  };

  it('runs commands on its spare shell as bash -c would', async () => {
    await idle();
    expect(await onSpare({ command: 'true' })).toBe('spare');
    await idle();
    const r = await client.exec({
      command: 'echo "$0 $#"; pwd; echo "[${OLDPWD-unset}] [$FOO] [${HOME-unset}] $LANG"; exit 3',
      cwd: dir,
      env: { FOO: "it's here", HOME: null, LANG: 'C' },
    });
    expect(r).toMatchObject({ code: 3, stderr: '' });
    expect(r.stdout).toBe(`/bin/bash 0\n${dir}\n[unset] [it's here] [unset] C\n`);
    expect(log).not.toMatch(/spare shell (unusable|exited)/);

    await idle();
    const syntax = await client.exec({ command: 'echo a; )', cwd: dir });
    expect(syntax.code).toBe(2);
    expect(syntax.stdout).toBe('');
    expect(syntax.stderr).toContain('line 1: syntax error');

    await idle();
    const fds = await client.exec({ command: 'ls /proc/$$/fd; cat', cwd: dir });
    expect(fds.stdout).toBe('0\n1\n2\n'); // the job's fds are closed; stdin is /dev/null
  });

  it('runs each command in a process of its own, even back to back', async () => {
    const results = await Promise.all([1, 2, 3].map((n) => client.exec({ command: `X=${n}; echo $X $$`, cwd: dir })));
    const pids = results.map((r) => r.stdout!.split(' ')[1]!.trim());
    expect(results.map((r) => r.stdout!.split(' ')[0])).toEqual(['1', '2', '3']);
    expect(new Set(pids).size).toBe(3);
    await idle();
    const later = await client.exec({ command: 'echo ${X-unset}', cwd: dir });
    expect(later.stdout).toBe('unset\n');
  });

  it('starts a fresh bash when an environment change is one bash reads at start-up', async () => {
    await idle();
    const r = await client.exec({ command: 'echo "$BASH_ENV"', cwd: dir, env: { BASH_ENV: '/dev/null' } });
    expect(r).toMatchObject({ code: 0, stdout: '/dev/null\n' });
    expect(await onSpare({ command: 'true', env: { BASH_ENV: '/dev/null' } })).toBe('fresh');
    await idle();
    expect(await onSpare({ command: 'true', env: { SOMETHING: 'else' } })).toBe('spare');
  });

  it('times out and cancels commands on the spare shell', async () => {
    await idle();
    const timed = await client.exec({ command: 'sleep 30', cwd: dir, timeout: 0.5 });
    expect(timed).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    await idle();
    const abort = new AbortController();
    const running = client.exec({ command: 'sleep 30 & sleep 30; wait', cwd: dir }, { signal: abort.signal });
    await idle(200);
    abort.abort();
    expect(await running).toMatchObject({ cancelled: true, signal: 'SIGKILL' });
  });

  it('replaces a spare shell that was killed while waiting', async () => {
    await idle();
    const spare = await client.exec({ command: `pgrep -f -n 'mapfile -d'`, cwd: dir });
    await client.exec({ argv: ['kill', '-9', spare.stdout!.trim()] });
    const r = await client.exec({ command: 'echo still here', cwd: dir });
    expect(r.stdout).toBe('still here\n');
  });

  /** Until the warm runner is up: it starts after the agent, and a loaded machine starts it slowly. */
  const warmed = async () => {
    const deadline = Date.now() + 30_000;
    while (!(await client.ping(5_000)).pythonWarm) {
      if (Date.now() > deadline) throw new Error(`the warm Python runner did not start in 30 s:\n${log}`);
      await idle(100);
    }
    await idle(); // its first child forks and warms up once it is up
  };

  it('runs Python snippets on a warm child like python3 -c', async () => {
    await warmed();
    const r = await client.exec({ python: 'import os, sys; print(os.getcwd(), sys.argv, os.getpgid(0) == os.getpid(), os.environ["FOO"]); sys.exit(4)', args: ['a'], cwd: dir, env: { FOO: 'x' } });
    expect(r).toMatchObject({ code: 4, runner: 'warm', stdout: `${dir} ['-c', 'a'] True x\n` });
    await idle();
    const failed = await client.exec({ python: '1/0', cwd: dir });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('ZeroDivisionError');
    // Ended by a signal, a snippet cannot report its code: the runner's reaping says how it ended.
    await idle();
    expect(await client.exec({ python: 'import os; os.kill(os.getpid(), 9)', cwd: dir })).toMatchObject({ code: null, signal: 'SIGKILL' });
    await idle();
    expect(await client.exec({ python: 'raise KeyboardInterrupt', cwd: dir })).toMatchObject({ code: null, signal: 'SIGINT' });
  });

  it('gives snippets the modules preloaded after their child was forked', async () => {
    await idle();
    expect(await client.preload(['fractions'])).toMatchObject({ loaded: ['fractions'] });
    await idle();
    const r = await client.exec({ python: 'import sys; print("fractions" in sys.modules)', cwd: dir });
    expect(r.stdout).toBe('True\n');
  });
});
