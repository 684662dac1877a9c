// The admin endpoints and the CLI: how Playwright tests and benchmarks in other processes drive
// the fake model over HTTP.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, type FakeState, startFakeModel } from './server.ts';

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

const script = { name: 'over http', turns: [{ reply: { content: [{ type: 'text', text: 'hi' }] }, repeat: 2 }] };
const ask = (url: string) =>
  fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'fake-key', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hello' }] }),
  });

describe('admin endpoints', () => {
  it('loads a script, reports state and resets over HTTP', async () => {
    const loaded = await fetch(`${fake.url}/_fake/script`, { method: 'POST', body: JSON.stringify(script) });
    expect(await loaded.json()).toEqual({ ok: true, name: 'over http', remaining: 2 });

    expect((await ask(fake.url)).status).toBe(200);
    const state = (await (await fetch(`${fake.url}/_fake/state`)).json()) as FakeState;
    expect(state).toMatchObject({ failures: [], remaining: 1 });
    expect(state.requests).toMatchObject([
      { n: 1, method: 'POST', path: '/v1/messages', turn: 0, aborted: false, headers: { 'x-api-key': 'fake-key' } },
    ]);
    expect(state.requests[0]?.body).toMatchObject({ model: 'm', messages: [{ role: 'user', content: 'hello' }] });

    expect(await (await fetch(`${fake.url}/_fake/reset`, { method: 'POST' })).json()).toEqual({ ok: true });
    expect(fake.state()).toEqual({ requests: [], failures: [], remaining: 2 });
  });

  it('rejects a malformed script with the validator message and keeps the old one', async () => {
    fake.load({ name: 'kept', turns: [] });
    const res = await fetch(`${fake.url}/_fake/script`, { method: 'POST', body: JSON.stringify({ name: 'x', turns: [{ reply: {} }] }) });

    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      ok: false,
      error: {
        code: 'invalid_script',
        message: 'invalid fake model script: script.turns[0].reply: expected a message ({"content": [...]}) or an error ({"error": {...}})',
      },
    });
    const bad = await fetch(`${fake.url}/_fake/script`, { method: 'POST', body: '{nope' });
    expect(bad.status).toBe(400);
    expect(fake.state().remaining).toBe(0);
  });

  it('answers CORS preflight for the model route and the admin routes', async () => {
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
    });

    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toBe('x-api-key,content-type');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect((await fetch(`${fake.url}/_fake/state`)).headers.get('access-control-allow-origin')).toBe('*');
    expect(fake.state().requests).toEqual([]);
  });

  it('close() ends a stream left hanging', async () => {
    const other = await startFakeModel({ script: { name: 'hang', turns: [{ reply: { content: [], hang_after_events: 1 } }] } });
    const res = await fetch(`${other.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [], stream: true }) });
    const reading = res.text();

    await other.close();

    await expect(reading).rejects.toThrow('terminated');
  });
});

describe('cli', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill();
  });

  it('serves a script file and prints its URL', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fake-model-')), 'script.json');
    writeFileSync(file, JSON.stringify(script));
    child = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), ['tests/fake-model/cli.ts', '--port', '0', '--script', file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      child?.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString()));
      child?.once('exit', (code) => reject(new Error(`cli exited with ${code}`)));
    });

    const url = /^fake model listening on (http:\/\/127\.0\.0\.1:\d+)\n$/.exec(line)?.[1];
    expect(url).toBeDefined();
    expect(await (await ask(url ?? '')).json()).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
  });

  it('refuses a malformed script file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fake-model-')), 'bad.json');
    writeFileSync(file, JSON.stringify({ turns: [] }));
    const bad = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), ['tests/fake-model/cli.ts', '--script', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    bad.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

    const code = await new Promise((resolve) => bad.once('exit', resolve));

    expect(code).toBe(2);
    expect(stderr).toContain('script.name: expected a string, got nothing');
  });
});
