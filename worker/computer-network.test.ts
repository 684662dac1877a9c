// The stack's side of the computer's network, with a real stack and a fake proxy: the ticket the
// computer starts with while the switch in Settings is on, none once it is off, the
// proxy's allowed hosts in the model status, and the traffic the Settings dialog polls.
import { describe, expect, it, vi } from 'vitest';
import { openTestMemory } from '../memory/test-helpers.ts';
import type { Computer, ComputerNetwork } from './computer.ts';
import { deviceCredentials } from './device.ts';
import type { ModelStatus } from '../protocol/settings.ts';
import type { Method, ParamsOf, ResultOf, StackApi } from '../protocol/stack-api.ts';
import { createStack } from './stack.ts';
import type { StackDeps } from './stack-deps.ts';
import { createMemoryStorage, type StackStorage } from '../storage/json-files.ts';
import { testComputer, testStackDeps } from './test-stack.ts';

const PROXY = 'http://proxy.test';
const ALLOWED = { hosts: ['pypi.org', '*.githubusercontent.com'], ports: [443] };

/** A proxy that knows the device `dev-token` and hands out numbered network tickets. */
function fakeProxy() {
  const asked: string[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    const authorised = new Headers(init?.headers).get('authorization') === 'Bearer dev-token';
    asked.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    if (url.pathname === '/health') return Response.json({ ok: true, anthropic: true, pairing: 'code' });
    if (!authorised) return Response.json({ error: { message: 'This device is not paired with the proxy.' } }, { status: 401 });
    if (url.pathname === '/v1/device') return Response.json({ device: { id: 'dev_1', label: 'Test laptop' }, limits: {}, network: ALLOWED });
    if (url.pathname === '/v1/net/ticket') {
      const ticket = `tk${asked.filter((a) => a.endsWith('/v1/net/ticket')).length}`;
      return Response.json({ ticket, expires_at: new Date(Date.now() + 12 * 3_600_000).toISOString(), wisp_path: '/v1/wisp', dns_path: '/dns-query', ...ALLOWED }, { status: 201 });
    }
    return new Response('', { status: 404 });
  }) as typeof fetch;
  return { fetchFn, asked };
}

async function openStack(storage: StackStorage, fetchFn: typeof fetch, computer: Partial<Computer> = {}) {
  const credentials = deviceCredentials(createMemoryStorage());
  await credentials.set(PROXY, { token: 'dev-token', device_id: 'dev_1', label: 'Test laptop' });
  const given: { network?: () => Promise<ComputerNetwork> } = {};
  const createComputer: StackDeps['createComputer'] = (_emit, network) => {
    given.network = network;
    return { ...testComputer(async () => ({})), ...computer };
  };
  const stack = await createStack(testStackDeps(await openTestMemory(), { storage, fetch: fetchFn, credentials, createStream: () => async function* () {}, createComputer }));
  return { stack, network: given.network! };
}

async function call<M extends Method>(stack: StackApi, method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  const response = await stack.request({ id: `r-${Math.random()}`, method, params } as never);
  if (!response.ok) throw new Error(response.error.message);
  return response.result as ResultOf<M>;
}

describe("the computer's network, from the stack", () => {
  it('starts the computer with a ticket while the switch is on, with none once it is off, and remembers the choice', async () => {
    const storage = createMemoryStorage();
    const { fetchFn, asked } = fakeProxy();
    const { stack, network } = await openStack(storage, fetchFn);
    expect((await call(stack, 'get_settings', {})).computer_network).toBe(true);
    expect(await network()).toEqual({ network: { relayUrl: 'ws://proxy.test/v1/wisp?ticket=tk1', dnsUrl: `${PROXY}/dns-query`, ticket: 'tk1' } });

    expect(await call(stack, 'update_settings', { computer_network: false })).toMatchObject({ computer_network: false });
    const ticketsBefore = asked.filter((a) => a === 'POST /v1/net/ticket').length;
    expect(await network()).toEqual({ network: null, offline: 'its network is turned off for this stack in Settings' });
    expect(asked.filter((a) => a === 'POST /v1/net/ticket')).toHaveLength(ticketsBefore); // the proxy is not even asked

    // Another opening of the stack (a reload) keeps it off.
    const reopened = await openStack(storage, fetchFn);
    expect((await reopened.stack.snapshot()).settings.computer_network).toBe(false);
    expect(await reopened.network()).toMatchObject({ network: null });
    await call(reopened.stack, 'update_settings', { computer_network: true });
    expect(await reopened.network()).toMatchObject({ network: { ticket: 'tk2' } });

    const refused = await reopened.stack.request({ id: 'bad', method: 'update_settings', params: { computer_network: 'off' as never } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'bad_request', message: `The computer's network is turned on with true or off with false, not "off".` } });
  });

  it('tells the running computer at once when the switch or the pairing changes', async () => {
    const { fetchFn } = fakeProxy();
    const told: ComputerNetwork[] = [];
    let ask: () => Promise<ComputerNetwork> = async () => ({ network: null, offline: '' });
    const { stack, network } = await openStack(createMemoryStorage(), fetchFn, { networkChanged: async () => void told.push(await ask()) });
    ask = network;
    /** What the computer was told after `change`. */
    const after = async (change: () => Promise<unknown>) => {
      const n = told.length;
      await change();
      for (let i = 0; i < 100 && told.length === n; i++) await new Promise((resolve) => setTimeout(resolve, 1));
      return told.at(-1);
    };
    expect(await after(() => call(stack, 'update_settings', { computer_network: false }))).toEqual({ network: null, offline: 'its network is turned off for this stack in Settings' });
    expect(await after(() => call(stack, 'update_settings', { computer_network: true }))).toMatchObject({ network: { dnsUrl: `${PROXY}/dns-query` } });
    expect(await after(() => call(stack, 'unpair_device', {}))).toEqual({ network: null, offline: 'this device is not paired with the proxy; pair it in Settings' });
    // A heartbeat setting is not a network change.
    const before = told.length;
    await call(stack, 'update_settings', { heartbeat_minutes: 30 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(told).toHaveLength(before);
  });

  it('renews the ticket an hour before it ends, and tells the running computer', async () => {
    const { fetchFn, asked } = fakeProxy();
    const told: ComputerNetwork[] = [];
    let ask: () => Promise<ComputerNetwork> = async () => ({ network: null, offline: '' });
    const { network } = await openStack(createMemoryStorage(), fetchFn, { networkChanged: async () => void told.push(await ask()) });
    ask = network;
    // The stack's first model check tells the computer too: not what this test is about.
    await new Promise((resolve) => setTimeout(resolve, 20));
    told.length = 0;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      expect(await network()).toMatchObject({ network: { ticket: 'tk1' } });
      await vi.advanceTimersByTimeAsync(10 * 3_600_000);
      expect(told).toEqual([]);
      await vi.advanceTimersByTimeAsync(3_600_000 + 2_000);
      expect(told).toMatchObject([{ network: { ticket: 'tk2', relayUrl: 'ws://proxy.test/v1/wisp?ticket=tk2' } }]);
      expect(asked.filter((a) => a === 'POST /v1/net/ticket')).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('says why the computer starts offline: not the proxy, not paired, revoked, unreachable, refused', async () => {
    const storage = createMemoryStorage();
    let mode: 'ok' | 'revoked' | 'down' | 'busy' = 'ok';
    const { fetchFn } = fakeProxy();
    const proxy = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input).endsWith('/v1/net/ticket') && mode !== 'ok') {
        if (mode === 'down') throw new TypeError('Failed to fetch');
        return Response.json({ error: { message: 'no' } }, { status: mode === 'revoked' ? 401 : 503 });
      }
      return fetchFn(input, init);
    }) as typeof fetch;
    const { stack, network } = await openStack(storage, proxy);
    const offline = async () => ((await network()) as { offline?: string }).offline;
    for (const [m, why] of [
      ['revoked', 'the proxy no longer accepts this device; pair it again in Settings'],
      ['down', 'the proxy could not be reached when it started'],
      ['busy', 'the proxy refused it a network ticket (HTTP 503)'],
    ] as const) {
      mode = m;
      expect(await offline()).toBe(why);
    }
    mode = 'ok';
    await call(stack, 'update_settings', { endpoint: 'http://other-proxy.test' });
    expect(await offline()).toBe('this device is not paired with the proxy; pair it in Settings');
    await call(stack, 'update_settings', { provider: 'openai' });
    expect(await offline()).toBe('it reaches the internet only through a Stackdocs proxy; choose one in Settings');
  });

  it('reports the proxy’s allowed hosts and ports with the pairing', async () => {
    const { fetchFn } = fakeProxy();
    const { stack } = await openStack(createMemoryStorage(), fetchFn);
    expect(await call(stack, 'check_model', {})).toEqual({ state: 'ready', endpoint: PROXY, device: 'Test laptop', network: ALLOWED } satisfies ModelStatus);
  });

  it('answers the traffic the computer’s network card counted, and whether the running computer has a network', async () => {
    const { fetchFn } = fakeProxy();
    const { stack } = await openStack(createMemoryStorage(), fetchFn, { networkUse: async () => ({ sent: 2048, received: 1_500_000, online: false }) });
    expect(await call(stack, 'computer_network', {})).toEqual({ sent_bytes: 2048, received_bytes: 1_500_000, online: false });
  });
});
