// `npm run pair` finds the proxy `npm start` runs whatever port it was given, from the note
// start.mjs leaves beside the owner token; PROXY_URL still wins.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProxy, type LocalProxy } from '../cloudflare-proxy/local.mjs';
import { unusedPortUrl } from '../cloudflare-proxy/test/fake-upstream.ts';

const stateDir = mkdtempSync(join(tmpdir(), 'stackdocs-pair-'));
let proxy: LocalProxy;

beforeAll(async () => {
  process.env.PROXY_STATE_DIR = stateDir;
  const owner = await import('./lib/owner.mjs');
  proxy = await startLocalProxy({ port: 0, ownerToken: owner.localOwnerToken() });
  // As start.mjs does once its proxy listens (here on a port the system chose, never 8787).
  owner.recordLocalProxyUrl(proxy.url);
}, 60_000);

afterAll(async () => {
  delete process.env.PROXY_STATE_DIR;
  await proxy?.dispose();
  rmSync(stateDir, { recursive: true, force: true });
});

async function pair(env: Record<string, string>, ...args: string[]) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !['PROXY_URL', 'PROXY_PORT', 'OWNER_TOKEN'].includes(name)));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, 'pair.mjs'), ...args], { env: { ...clean, PROXY_STATE_DIR: stateDir, ...env } });
    return { ok: true, out: stdout };
  } catch (error) {
    return { ok: false, out: (error as { stderr: string }).stderr };
  }
}

describe('npm run pair', () => {
  it('talks to the proxy npm start noted, on the port it was given', async () => {
    const answer = await pair({}, 'the kiosk');
    expect(answer).toMatchObject({ ok: true, out: expect.stringMatching(/^Pairing code: [0-9A-Z]{4}-[0-9A-Z]{4}\n/) });
    const listed = await pair({}, '--list');
    expect(listed.out).toContain('No devices are paired yet.');
  });

  it('goes where PROXY_URL says, even with a note, and names where the address came from when it cannot reach it', async () => {
    const nowhere = await unusedPortUrl();
    const answer = await pair({ PROXY_URL: nowhere }, '--list');
    expect(answer).toEqual({ ok: false, out: `Could not reach the proxy at ${nowhere} (from PROXY_URL). Is \`npm start\` running (or PROXY_URL right)?\n` });
  });
});
