import { describe, expect, it } from 'vitest';
import { AgentClient, AgentError } from './agent-client.ts';
import { FakeGuest } from './testing/fake-guest.ts';

function setup(options: { ackDelayMs?: number } = {}) {
  const guest = new FakeGuest();
  guest.ackDelayMs = options.ackDelayMs ?? 0;
  const client = new AgentClient(guest);
  guest.ready();
  return { guest, client };
}

describe('AgentClient', () => {
  it('holds frames until the agent is ready, then answers ping', async () => {
    const guest = new FakeGuest();
    const client = new AgentClient(guest);
    const pong = client.ping();
    await new Promise((r) => setTimeout(r, 10));
    expect(guest.received).toEqual([]);
    guest.ready();
    expect((await client.waitReady()).bootId).toBe('fake-boot');
    expect((await pong).version).toBe(1);
  });

  it('waitReady times out with an AgentError', async () => {
    const client = new AgentClient(new FakeGuest());
    await expect(client.waitReady(20)).rejects.toMatchObject({ name: 'AgentError', code: 'timeout' });
  });

  it('runs an exec and collects output and exit', async () => {
    const { client } = setup();
    const seen: string[] = [];
    const r = await client.exec({ command: 'echo hi there' }, { onStdout: (b) => seen.push(new TextDecoder().decode(b)) });
    expect(r).toMatchObject({ code: 0, signal: null, timedOut: false, cancelled: false, stdout: 'hi there\n', stderr: '' });
    expect(r.pid).toBeGreaterThan(0);
    expect(seen).toEqual(['hi there\n']);
  });

  it('reports a non-zero exit and stderr', async () => {
    const { client } = setup();
    const r = await client.exec({ argv: ['fail'] });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('it failed\n');
  });

  it('rejects an agent error as a typed AgentError', async () => {
    const { client } = setup();
    const err = await client.exec({ command: 'nope' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('spawn_failed');
  });

  it('cancels through an AbortSignal', async () => {
    const { client, guest } = setup();
    const ac = new AbortController();
    const run = client.exec({ command: 'sleep' }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    const r = await run;
    expect(r).toMatchObject({ cancelled: true, code: null, signal: 'SIGKILL' });
    expect(guest.received.some((h) => h.type === 'cancel')).toBe(true);
  });

  it('rejects an exec whose signal is already aborted without sending it', async () => {
    const { client, guest } = setup();
    const ac = new AbortController();
    ac.abort();
    await expect(client.exec({ command: 'echo x' }, { signal: ac.signal })).rejects.toMatchObject({ code: 'aborted' });
    expect(guest.received.filter((h) => h.type === 'exec')).toEqual([]);
  });

  it('passes the timeout and reports timedOut', async () => {
    const { client } = setup();
    const r = await client.exec({ command: 'sleep', timeout: 0.05 });
    expect(r.timedOut).toBe(true);
  });

  it('runs several execs at once', async () => {
    const { client } = setup();
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => client.exec({ command: `echo ${n}` })));
    expect(results.map((r) => r.stdout)).toEqual(['1\n', '2\n', '3\n', '4\n', '5\n']);
  });

  it('streams big stdin within the window without drops', async () => {
    const { client, guest } = setup({ ackDelayMs: 1 });
    const input = new Uint8Array(200 * 1024).map((_, i) => 97 + (i % 26));
    const r = await client.exec({ command: 'cat', input }, { collect: true });
    expect(r.stdout?.length).toBe(input.length);
    expect(r.stdout?.slice(0, 3)).toBe('abc');
    expect(guest.dropped).toBe(0);
    expect(guest.maxUnread).toBeLessThanOrEqual(8);
  });

  it('sends a request bigger than one frame as chunks', async () => {
    const { client, guest } = setup({ ackDelayMs: 1 });
    const python = `echo ${'y'.repeat(20_000)}`;
    const r = await client.exec({ python });
    expect(r.stdout?.length).toBe(20_001);
    expect(r.runner).toBe('warm');
    expect(guest.dropped).toBe(0);
  });

  it('receives large output', async () => {
    const { client } = setup();
    const r = await client.exec({ command: 'big 1000000' });
    expect(r.stdout?.length).toBe(1_000_000);
  });

  it('settime and preload', async () => {
    const { client, guest } = setup();
    await client.settime(1234);
    expect(guest.received.find((h) => h.type === 'settime')?.epochMs).toBe(1234);
    expect(await client.preload(['numpy'])).toEqual({ loaded: ['numpy'], failed: {}, ms: 5 });
  });

  it('fails pending requests when the agent restarts', async () => {
    const { client, guest } = setup();
    const run = client.exec({ command: 'sleep' });
    await new Promise((r) => setTimeout(r, 10));
    guest.ready();
    await expect(run).rejects.toMatchObject({ code: 'agent_restarted' });
    expect((await client.exec({ command: 'echo again' })).stdout).toBe('again\n');
  });

  it('ping times out when nobody answers, and close fails what is pending', async () => {
    const guest = new FakeGuest();
    const client = new AgentClient(guest, { awaitReady: false });
    guest.send = () => {}; // a guest that stopped reading
    await expect(client.ping(20)).rejects.toMatchObject({ code: 'timeout' });
    const run = client.exec({ command: 'sleep' });
    client.close();
    await expect(run).rejects.toMatchObject({ code: 'closed' });
    await expect(client.ping()).rejects.toMatchObject({ code: 'closed' });
  });
});
