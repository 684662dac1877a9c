// Devices, not origins: every refusal of the proxy's device credential and limits, on the real
// Worker under Miniflare (the Devices Durable Object with SQLite storage, as deployed).
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../local.mjs';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';

const KEY = 'test-key-devices';
const OWNER = 'test-owner-token';
const APP_ORIGIN = 'http://127.0.0.1:4173';

let upstream: FakeUpstream;
let proxy: LocalProxy;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startLocalProxy({ port: 0, upstream: upstream.url, apiKey: KEY, ownerToken: OWNER, allowedOrigins: [APP_ORIGIN] });
});

afterAll(async () => {
  await proxy?.dispose();
  await upstream?.close();
});

const owner = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
  fetch(`${proxy.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.token ?? OWNER}`, 'content-type': 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

async function newCode(body: Record<string, unknown> = {}): Promise<string> {
  const response = await owner('/v1/owner/pairing-codes', { method: 'POST', body });
  expect(response.status).toBe(201);
  return ((await response.json()) as { code: string }).code;
}

/** `from`: the client address, as Cloudflare's edge (or Miniflare, from the socket) sets it. */
async function pair(code: string, label = 'laptop', base = proxy.url, from?: string): Promise<Response> {
  return fetch(`${base}/v1/pair`, { method: 'POST', headers: { 'content-type': 'application/json', ...(from ? { 'cf-connecting-ip': from } : {}) }, body: JSON.stringify({ code, label }) });
}

async function newDevice(body: Record<string, unknown> = {}, base = proxy.url): Promise<{ token: string; id: string }> {
  const response = await pair(await newCode(body), 'laptop', base);
  const json = (await response.json()) as { token: string; device: { id: string } };
  return { token: json.token, id: json.device.id };
}

const messages = (token: string | null, headers: Record<string, string> = {}, base = proxy.url, signal?: AbortSignal) =>
  fetch(`${base}/v1/messages`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: '{"model":"m","max_tokens":8,"messages":[]}',
  });

async function refusal(response: Response) {
  const body = (await response.json()) as { error: { type: string; message: string } };
  return { status: response.status, type: body.error.type, message: body.error.message };
}

describe('a device credential on every route but /health and pairing', () => {
  it('refuses a request with no token, with and without an Origin, saying how to pair', async () => {
    for (const headers of [{}, { origin: APP_ORIGIN }] as Record<string, string>[]) {
      const refused = await refusal(await messages(null, headers));
      expect(refused).toMatchObject({ status: 401, type: 'device_not_paired' });
      expect(refused.message).toContain('npm run pair');
      expect(refused.message).toContain('Pair this device');
    }
    for (const [path, method] of [['/v1/fetch', 'POST'], ['/v1/search', 'POST'], ['/v1/ocr', 'POST'], ['/v1/device', 'GET']] as const) {
      expect((await fetch(`${proxy.url}${path}`, { method, ...(method === 'POST' ? { body: '{}' } : {}) })).status).toBe(401);
    }
    expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
    expect(upstream.received).toHaveLength(0);
  });

  it('refuses a wrong token, and a paired one from an origin that is not allowed', async () => {
    expect(await refusal(await messages('sdk_dev_not-a-real-token'))).toMatchObject({ status: 401, type: 'device_token_invalid' });
    const { token } = await newDevice();
    expect((await messages(token, { origin: 'https://elsewhere.example' })).status).toBe(403);
    expect((await messages(token, { origin: APP_ORIGIN })).status).toBe(200);
    expect(upstream.received.at(-1)?.headers.authorization).toBeUndefined();
    expect(upstream.received.at(-1)?.headers['x-api-key']).toBe(KEY);
  });

  it('a code pairs once; the owner lists devices with their last use, and a revoked one is refused at once', async () => {
    const code = await newCode({ label: "Anna's Chromebook" });
    // Forgiving to type: lower case, no dash.
    const first = await pair(code.toLowerCase().replace('-', ''));
    expect(first.status).toBe(201);
    const { token, device } = (await first.json()) as { token: string; device: { id: string; label: string } };
    expect(device.label).toBe("Anna's Chromebook");
    expect(await refusal(await pair(code))).toMatchObject({ status: 401, type: 'pairing_code_invalid' });

    expect((await messages(token)).status).toBe(200);
    const listed = (await (await owner('/v1/owner/devices')).json()) as { devices: { id: string; last_used_at: string | null; revoked_at: string | null }[] };
    const mine = listed.devices.find((d) => d.id === device.id);
    expect(mine?.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(token);

    expect((await owner(`/v1/owner/devices/${device.id}`, { method: 'DELETE' })).status).toBe(200);
    const revoked = await refusal(await messages(token, { origin: APP_ORIGIN }));
    expect(revoked).toMatchObject({ status: 401, type: 'device_revoked' });
    expect(revoked.message).toContain("Anna's Chromebook");
    // Revoking one device leaves the others working.
    const other = await newDevice();
    expect((await messages(other.token)).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    const shortLived = await startLocalProxy({ port: 0, upstream: upstream.url, apiKey: KEY, localPairing: true, deviceTokenTtlS: 1 });
    try {
      const { token } = (await (await fetch(`${shortLived.url}/v1/pair/local`, { method: 'POST', body: '{}' })).json()) as { token: string };
      expect((await messages(token, {}, shortLived.url)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await refusal(await messages(token, {}, shortLived.url))).toMatchObject({ status: 401, type: 'device_token_expired' });
    } finally {
      await shortLived.dispose();
    }
  });
});

describe('per-device limits', () => {
  it('over its requests a minute a device gets 429 with retry-after; the owner sets the limit per device', async () => {
    const { token, id } = await newDevice({ requests_per_minute: 3 });
    for (let i = 0; i < 3; i++) expect((await messages(token)).status).toBe(200);
    const limited = await messages(token, { origin: APP_ORIGIN });
    expect(await refusal(limited.clone())).toMatchObject({ status: 429, type: 'device_rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('access-control-expose-headers')).toContain('retry-after');
    // Another device is not slowed by it.
    expect((await messages((await newDevice()).token)).status).toBe(200);
    // The owner lifts it.
    const patched = await owner(`/v1/owner/devices/${id}`, { method: 'PATCH', body: { requests_per_minute: 100 } });
    expect(((await patched.json()) as { device: { requests_per_minute: number } }).device.requests_per_minute).toBe(100);
    expect((await messages(token)).status).toBe(200);
    expect(await refusal(await owner(`/v1/owner/devices/${id}`, { method: 'PATCH', body: { requests_per_minute: -2 } }))).toMatchObject({ status: 400, type: 'invalid_request' });
  });

  it('counts the model tokens each reply reports, streamed or not, and refuses the rest of the day once over', async () => {
    const { token } = await newDevice({ tokens_per_day: 1_000 });
    upstream.respond((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":500,"cache_read_input_tokens":200,"output_tokens":1}}}\n\n' +
          'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":400}}\n\n' +
          'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      );
    });
    try {
      const streamed = await messages(token);
      expect(streamed.status).toBe(200);
      await streamed.text();
      // 500 + 200 + 400 = 1,100 > 1,000: the next request waits for tomorrow.
      const device = await waitFor(async () => {
        const body = (await (await fetch(`${proxy.url}/v1/device`, { headers: { authorization: `Bearer ${token}` } })).json()) as { device?: { tokens_today: number } };
        return body.device?.tokens_today === 1_100 ? body : null;
      });
      expect(device).not.toBeNull();
      const over = await messages(token);
      const refused = await refusal(over.clone());
      expect(refused).toMatchObject({ status: 429, type: 'device_daily_limit' });
      expect(refused.message).toContain('1,000 model tokens for today');
      expect(over.headers.get('x-should-retry')).toBe('false');
    } finally {
      upstream.respond((_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    }
    // A JSON reply is counted too.
    const other = await newDevice({ tokens_per_day: 10 });
    upstream.respond((_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"message","usage":{"input_tokens":7,"output_tokens":5}}'));
    try {
      await (await messages(other.token)).text();
      await waitFor(async () => ((await messages(other.token)).status === 429 ? true : null));
    } finally {
      upstream.respond((_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    }
  });

  it('counts a reply whose client leaves mid-stream or before it starts, and still stops the model', async () => {
    const tokensToday = async (token: string) =>
      ((await (await fetch(`${proxy.url}/v1/device`, { headers: { authorization: `Bearer ${token}` } })).json()) as { device: { tokens_today: number } }).device.tokens_today;
    const START = 'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":5000,"cache_read_input_tokens":700,"output_tokens":1}}}\n\n';
    const DELTA = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a few words"}}\n\n';
    let stopped = 0;
    for (const when of ['mid-stream', 'before the reply starts'] as const) {
      const { token } = await newDevice();
      upstream.respond((_request, response) => {
        // The model never finishes on its own: only the proxy stopping it ends this reply.
        let writing: ReturnType<typeof setInterval> | undefined;
        response.on('close', () => {
          clearInterval(writing);
          stopped++;
        });
        const begin = () => {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write(START + DELTA.repeat(20));
          writing = setInterval(() => response.write(DELTA), 50);
        };
        if (when === 'mid-stream') begin();
        else setTimeout(begin, 300);
      });
      try {
        const leaving = new AbortController();
        const reply = messages(token, {}, proxy.url, leaving.signal);
        if (when === 'mid-stream') {
          const reader = (await reply).body!.getReader();
          expect((await reader.read()).done).toBe(false);
        } else {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        leaving.abort();
        await reply.catch(() => {});
        // The input as the API reported it, and the output from what had streamed (at least what it said).
        const counted = await waitFor(async () => {
          const tokens = await tokensToday(token);
          return tokens > 5_700 ? tokens : null;
        }, 5_000);
        expect(counted, when).not.toBeNull();
        expect(await waitFor(async () => (stopped > 0 ? stopped : null), 5_000), `the model was stopped (${when})`).not.toBeNull();
        stopped = 0;
      } finally {
        upstream.respond((_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
      }
    }
  });

  it('caps request bodies per route before they cost anything upstream', async () => {
    const { token } = await newDevice();
    const before = upstream.received.length;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${proxy.url}/v1/messages`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(40 * 1024 * 1024), authorization: `Bearer ${token}` } },
        (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk));
          response.on('end', () => {
            request.destroy();
            resolve({ status: response.statusCode ?? 0, body });
          });
        },
      );
      request.on('error', reject);
      request.flushHeaders();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.message).toBe("The model request is over this proxy's limit of 32 MB.");
    const bigPairing = await fetch(`${proxy.url}/v1/pair`, { method: 'POST', body: JSON.stringify({ code: 'x'.repeat(5_000) }) });
    expect(await refusal(bigPairing)).toMatchObject({ status: 413, type: 'request_too_large' });
    expect(upstream.received.length).toBe(before);
  });
});

describe('pairing and the owner', () => {
  it('pauses pairing after ten wrong codes in a minute', async () => {
    const guessing = await startLocalProxy({ port: 0, ownerToken: OWNER });
    try {
      for (let i = 0; i < 10; i++) expect((await pair(`WRNG-000${i}`, 'x', guessing.url)).status).toBe(401);
      const locked = await pair('WRNG-0010', 'x', guessing.url);
      expect(await refusal(locked.clone())).toMatchObject({ status: 429, type: 'pairing_locked' });
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await guessing.dispose();
    }
  });

  it("pauses pairing for the address sending wrong codes, not for others, and for everyone only past 100 a minute", async () => {
    const guessing = await startLocalProxy({ port: 0, ownerToken: OWNER });
    // The counts are per UTC minute: all of this within one.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    const code = async () => ((await (await fetch(`${guessing.url}/v1/owner/pairing-codes`, { method: 'POST', headers: { authorization: `Bearer ${OWNER}` }, body: '{}' })).json()) as { code: string }).code;
    try {
      for (let i = 0; i < 10; i++) expect((await pair(`WRNG-000${i}`, 'x', guessing.url, '203.0.113.7')).status).toBe(401);
      const locked = await refusal(await pair(await code(), 'x', guessing.url, '203.0.113.7'));
      expect(locked).toMatchObject({ status: 429, type: 'pairing_locked', message: expect.stringContaining('from this address') });
      // Someone else, elsewhere, pairs as usual.
      expect((await pair(await code(), 'laptop', guessing.url, '198.51.100.9')).status).toBe(201);
      // Many addresses together: past 100 wrong codes in the minute pairing pauses for all.
      for (let a = 1; a <= 9; a++) {
        for (let i = 0; i < 10; i++) expect((await pair(`WRNG-00${a}${i}`, 'x', guessing.url, `192.0.2.${a}`)).status).toBe(401);
      }
      expect(await refusal(await pair(await code(), 'x', guessing.url, '198.51.100.10'))).toMatchObject({ status: 429, type: 'pairing_locked', message: expect.not.stringContaining('from this address') });
    } finally {
      await guessing.dispose();
    }
  });

  it('refuses an address flooding wrong device tokens before it reaches the devices, and paired devices go on', async () => {
    const { token } = await newDevice();
    const statuses: number[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => messages(`sdk_dev_guess-${batch}-${i}`, { 'cf-connecting-ip': '192.0.2.66' }).then(async (r) => (await refusal(r)).status)),
      );
      statuses.push(...answers);
      // A paired device (another address) is served all along.
      expect((await messages(token)).status).toBe(200);
    }
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(30);
    expect(statuses.slice(-10)).toEqual(Array(10).fill(429));
    const gated = await refusal(await messages('sdk_dev_another-guess', { 'cf-connecting-ip': '192.0.2.66' }));
    expect(gated).toMatchObject({ status: 429, type: 'too_many_failures' });
    // Even its right token waits out the minute: the address, not the token, is refused.
    expect((await messages(token, { 'cf-connecting-ip': '192.0.2.66' })).status).toBe(429);
  });

  it('pairs without a code only where local pairing is on', async () => {
    expect(await refusal(await fetch(`${proxy.url}/v1/pair/local`, { method: 'POST', body: '{}' }))).toMatchObject({ status: 403, type: 'local_pairing_off' });
  });

  it("the owner's routes need the owner's token, and a proxy without one says how to set it", async () => {
    expect(await refusal(await owner('/v1/owner/devices', { token: 'not-the-owner' }))).toMatchObject({ status: 401, type: 'owner_unauthorized' });
    expect(await refusal(await fetch(`${proxy.url}/v1/owner/pairing-codes`, { method: 'POST', body: '{}' }))).toMatchObject({ status: 401, type: 'owner_unauthorized' });
    // A device token is not the owner's.
    const { token } = await newDevice();
    expect((await owner('/v1/owner/devices', { token })).status).toBe(401);
    const ownerless = await startLocalProxy({ port: 0 });
    try {
      const refused = await refusal(await fetch(`${ownerless.url}/v1/owner/devices`, { headers: { authorization: 'Bearer anything' } }));
      expect(refused).toMatchObject({ status: 503, type: 'owner_not_configured' });
      expect(refused.message).toContain('wrangler secret put OWNER_TOKEN');
    } finally {
      await ownerless.dispose();
    }
    expect(await refusal(await owner('/v1/owner/devices/dev_nosuchdevice', { method: 'DELETE' }))).toMatchObject({ status: 404, type: 'device_not_found' });
  });
});

async function waitFor<T>(probe: () => Promise<T | null>, ms = 1_000): Promise<T | null> {
  for (let i = 0; i < ms / 20; i++) {
    const found = await probe();
    if (found !== null) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}
