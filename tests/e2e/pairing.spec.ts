// A proxy that trusts devices, not origins: pointed at one that pairs only with a code, the app
// says so; a code from `npm run pair` pairs it in Settings; the owner lists and revokes it with
// `npm run pair`, and the next message says how to pair again.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startLocalProxy } from '../../cloudflare-proxy/local.mjs';
import { assistant, openApp, send } from './app.ts';
import { fakeState, loadScript } from './fake.ts';
import { E2E_APP_URL, E2E_PROXY_SECRET } from './ports.ts';
import { expect, test } from './test.ts';

const OWNER = 'e2e-owner-token';
const run = promisify(execFile);

/** `npm run pair [-- args]`, against the given proxy as its owner. */
async function pairScript(proxyUrl: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(import.meta.dirname, '..', '..', 'scripts', 'pair.mjs'), ...args], {
    env: { ...process.env, PROXY_URL: proxyUrl, OWNER_TOKEN: OWNER },
  });
  return stdout;
}

test('pairing with the owner’s code in Settings; a revoked device is told how to pair again', async ({ page }) => {
  const owned = await startLocalProxy({
    port: 0,
    upstream: process.env.E2E_FAKE_URL!,
    apiKey: E2E_PROXY_SECRET,
    ownerToken: OWNER,
    allowedOrigins: [E2E_APP_URL],
    netAllowedHosts: ['pypi.org', '*.githubusercontent.com'],
    netAllowedPorts: [443],
  });
  try {
    await loadScript({ name: 'paired', turns: [{ reply: { content: [{ type: 'text', text: 'Paired and answering.' }] } }] });
    await openApp(page);
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('textbox', { name: 'Model endpoint' }).fill(owned.url);
    await page.getByRole('button', { name: 'Save' }).click();
    const banner = page.locator('.model-banner');
    await expect(banner).toContainText('This device is not paired with the proxy');
    await expect(banner).toContainText('npm run pair');

    const printed = await pairScript(owned.url, 'E2E laptop');
    const code = /Pairing code: (\S+)/.exec(printed)?.[1];
    expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    await page.getByRole('button', { name: 'Open settings' }).click();
    const device = page.getByRole('group', { name: 'This device' });
    await device.getByRole('textbox', { name: 'Pairing code' }).fill('WRONG-CODE');
    await device.getByRole('button', { name: 'Pair this device' }).click();
    await expect(device.getByRole('alert')).toContainText('not a pairing code this proxy gave out');
    await device.getByRole('textbox', { name: 'Pairing code' }).fill(code!.toLowerCase());
    await device.getByRole('button', { name: 'Pair this device' }).click();
    await expect(device).toContainText('This browser is paired with the proxy as E2E laptop');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(banner).toHaveCount(0);

    // Settings' Network section: paired, the hosts this proxy allows, the session's traffic, and
    // the stack's switch for the computer's network, still off after a reload.
    await page.getByRole('button', { name: 'Settings' }).click();
    const network = page.getByRole('region', { name: 'Network' });
    await expect(network).toContainText('Paired with the proxy as E2E laptop');
    await expect(network).toContainText('The proxy lets the computer reach these hosts, on port 443');
    await expect(network.getByRole('list', { name: /these hosts/ }).getByRole('listitem')).toHaveText(['pypi.org', '*.githubusercontent.com']);
    await expect(network.getByRole('status')).toHaveText('0 B sent · 0 B received this session');
    const allowed = network.getByRole('switch', { name: 'The computer may use the network' });
    await expect(allowed).toBeChecked();
    await allowed.click();
    await expect(allowed).not.toBeChecked();
    await expect(allowed).toBeEnabled(); // saved
    await page.reload();
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled();
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(network).toContainText('Paired with the proxy as E2E laptop');
    await expect(allowed).not.toBeChecked();
    await page.getByRole('button', { name: 'Cancel' }).click();

    await send(page, 'are you there?');
    await expect(assistant(page).last()).toHaveText('Paired and answering.');
    expect((await fakeState()).failures).toEqual([]);
    // The page holds a device token, never the key.
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + document.documentElement.outerHTML);
    expect(stored).not.toContain(E2E_PROXY_SECRET);

    const listed = await pairScript(owned.url, '--list');
    const id = /^(dev_\S+)\s+E2E laptop\s+\(last used/m.exec(listed)?.[1];
    expect(id, listed).toBeDefined();
    expect(await pairScript(owned.url, '--revoke', id!)).toContain(`Revoked ${id} (E2E laptop)`);

    await send(page, 'still there?');
    await expect(page.locator('[data-role=error]').last()).toContainText('was unpaired by the proxy');
    await expect(banner).toContainText('Pair it again');
  } finally {
    await owned.dispose();
  }
});
