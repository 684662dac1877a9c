// A stack and the real proxy (under Miniflare) with the scripted model behind it: pairing with the
// owner's code, pairing by itself with the local proxy, the token on every proxy call, and a
// revoked device told how to pair again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../cloudflare-proxy/local.mjs';
import { openTestMemory } from '../memory/test-helpers.ts';
import { startFakeModel, type FakeModel } from '../tests/fake-model/server.ts';
import { createAnthropicStream } from './agent/anthropic.ts';
import { deviceCredentials, deviceLabel } from './device.ts';
import type { StackEvent } from '../protocol/events.ts';
import type { StackApi } from '../protocol/stack-api.ts';
import { createStack } from './stack.ts';
import { createMemoryStorage } from '../storage/json-files.ts';
import { testStackDeps } from './test-stack.ts';

const OWNER = 'owner-token-for-tests';
let fake: FakeModel;
let proxy: LocalProxy;

beforeAll(async () => {
  fake = await startFakeModel({ port: 0 });
  proxy = await startLocalProxy({ port: 0, upstream: fake.url, apiKey: 'fake-upstream-key', ownerToken: OWNER });
});

afterAll(async () => {
  await proxy?.dispose();
  await fake?.close();
});

async function openStack(endpoint: string, deviceStorage = createMemoryStorage()) {
  const memory = await openTestMemory();
  const stack = await createStack(
    testStackDeps(memory, {
      fetch: (input, init) => fetch(input, init),
      defaults: { provider: 'proxy', endpoint, model: 'claude-test', heartbeat_minutes: 0, has_api_key: false, ocr_engine: 'local', computer_network: true },
      credentials: deviceCredentials(deviceStorage),
      deviceLabel: 'Stackdocs in Chrome on ChromeOS',
      createStream: ({ endpoint: baseURL, deviceToken }) => createAnthropicStream({ baseURL, deviceToken }),
    }),
  );
  const events: StackEvent[] = [];
  await stack.subscribe(0, (batch) => events.push(...batch));
  return { stack, events, deviceStorage };
}

async function call<T>(stack: StackApi, method: string, params: unknown = {}): Promise<T> {
  const response = await stack.request({ id: `r-${Math.random()}`, method, params } as never);
  if (!response.ok) throw Object.assign(new Error(response.error.message), { shape: response.error });
  return response.result as T;
}

async function newCode(): Promise<string> {
  const response = await fetch(`${proxy.url}/v1/owner/pairing-codes`, { method: 'POST', headers: { authorization: `Bearer ${OWNER}` }, body: '{}' });
  return ((await response.json()) as { code: string }).code;
}

async function finished(events: StackEvent[], missionId: string) {
  for (let i = 0; i < 500; i++) {
    const done = events.find((e) => e.type === 'mission_finished' && e.mission_id === missionId);
    if (done) return done as Extract<StackEvent, { type: 'mission_finished' }>;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the mission did not finish');
}

describe('pairing this browser with the proxy', () => {
  it('an unpaired browser is told how to pair; the owner’s code pairs it for every stack; a revoked one is told again', async () => {
    const { stack, events, deviceStorage } = await openStack(proxy.url);
    const unpaired = await call<{ state: string; pairing?: string; message: string }>(stack, 'check_model');
    expect(unpaired).toMatchObject({ state: 'not_configured', pairing: 'code' });
    expect(unpaired.message).toContain('npm run pair');

    await expect(call(stack, 'pair_device', { code: 'ZZZZ-ZZZZ' })).rejects.toThrow(/The proxy did not pair this device: That code is not a pairing code this proxy gave out/);
    const paired = await call<{ state: string; device?: string }>(stack, 'pair_device', { code: await newCode() });
    // With where the proxy lets the computer connect: its defaults, as this proxy sets none.
    expect(paired).toEqual({ state: 'ready', endpoint: proxy.url, device: 'Stackdocs in Chrome on ChromeOS', network: { hosts: expect.arrayContaining(['pypi.org', 'files.pythonhosted.org', 'deb.debian.org']), ports: [80, 443] } });

    // The model call carries the device token; the upstream gets the key, never the token.
    fake.load({ name: 'paired', turns: [{ expect: { headers: { 'x-api-key': 'fake-upstream-key', authorization: null } }, reply: { content: [{ type: 'text', text: 'hello' }] } }] });
    const { mission_id } = await call<{ mission_id: string }>(stack, 'mission', { text: 'hi' });
    expect((await finished(events, mission_id)).status).toBe('completed');
    expect(fake.state().failures).toEqual([]);

    // Another stack of the same browser is paired already.
    const second = await openStack(proxy.url, deviceStorage);
    expect(await call(second.stack, 'check_model')).toMatchObject({ state: 'ready', device: 'Stackdocs in Chrome on ChromeOS' });

    // The owner revokes it: the next message fails saying so, and the status asks for a new code.
    const { devices } = (await (await fetch(`${proxy.url}/v1/owner/devices`, { headers: { authorization: `Bearer ${OWNER}` } })).json()) as { devices: { id: string; label: string }[] };
    await fetch(`${proxy.url}/v1/owner/devices/${devices.at(-1)!.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${OWNER}` } });
    const again = await call<{ mission_id: string }>(stack, 'mission', { text: 'still there?' });
    const refused = await finished(events, again.mission_id);
    expect(refused.error).toMatchObject({ code: 'model_not_configured' });
    expect(refused.error?.message).toContain('was unpaired by the proxy');
    expect(await call(stack, 'check_model')).toMatchObject({ state: 'not_configured', pairing: 'code' });

    expect(await call(stack, 'unpair_device')).toMatchObject({ state: 'not_configured' });
    expect(await deviceCredentials(deviceStorage).get(proxy.url)).toBeNull();
  });

  it('with the local proxy of `npm start`, the app pairs by itself', async () => {
    const local = await startLocalProxy({ port: 0, upstream: fake.url, apiKey: 'fake-upstream-key', localPairing: true });
    try {
      const { stack, deviceStorage } = await openStack(local.url);
      expect(await call(stack, 'check_model')).toMatchObject({ state: 'ready', endpoint: local.url, device: 'Stackdocs in Chrome on ChromeOS' });
      const credential = await deviceCredentials(deviceStorage).get(local.url);
      expect(credential?.token).toMatch(/^sdk_dev_/);
    } finally {
      await local.dispose();
    }
  });

  it('names a browser by what it is', () => {
    expect(deviceLabel('Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36')).toBe('Stackdocs in Chrome on ChromeOS');
    expect(deviceLabel('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0')).toBe('Stackdocs in Firefox on Windows');
  });
});
