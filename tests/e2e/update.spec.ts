// A new version of the app deployed over the one a user has open: the notice appears and nothing
// reloads by itself; "Restart" first saves and stops the computer (the next open wakes it rather
// than booting) and closes the stack, then the new version takes over; a file written in
// /workspace just before is there after. Two real builds, differing in their version.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { buildApp } from '../../scripts/lib/serve.mjs';
import { expect, test } from './test.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';
import { serveStatic, type StaticServer } from '../support/static-server.ts';

const IMAGE = join(import.meta.dirname, '..', '..', 'vm-images', 'out', 'latest', 'manifest.json');
test.skip(!existsSync(IMAGE), 'no computer image is built (vm-images/build.sh needs root)');
test.describe.configure({ mode: 'serial' });

const out = join(import.meta.dirname, '..', '..', 'test-results');
const builds = { a: join(out, 'update-a'), b: join(out, 'update-b') };
let server: StaticServer;
let profile: string;
let context: BrowserContext;
let page: Page;

async function build(dir: string, version: string): Promise<void> {
  process.env.STACKDOCS_VERSION = version;
  try {
    await buildApp({ proxyUrl: '', quiet: true, outDir: dir });
  } finally {
    delete process.env.STACKDOCS_VERSION;
  }
}

test.beforeAll(async () => {
  test.setTimeout(4 * 60_000);
  await build(builds.a, '0.1.0-update-a');
  await build(builds.b, '0.1.0-update-b');
  server = await serveStatic(builds.a, '/');
  profile = mkdtempSync(join(tmpdir(), 'stackdocs-update-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, viewport: { width: 1280, height: 800 } });
  page = context.pages()[0] ?? (await context.newPage());
});

test.afterAll(async () => {
  await context?.close().catch(() => {});
  await server?.close();
  rmSync(profile, { recursive: true, force: true });
});

const terminal = () => page.getByRole('region', { name: 'Terminal: root shell on the computer' });
const chip = () => page.getByRole('status', { name: 'Computer' });

async function version(): Promise<string> {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const text = (await page.locator('.settings-version').textContent()) ?? '';
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  return text;
}

async function run(command: string, expected: RegExp, timeout = 120_000): Promise<void> {
  if (!(await terminal().isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
  }
  await expect(chip()).toContainText(/ready/, { timeout: 5 * 60_000 });
  await terminal().click();
  await page.keyboard.type(`${command}\n`, { delay: 5 });
  await expect(terminal().locator('.xterm-rows')).toContainText(expected, { timeout });
}

test('a new version waits for the user; Restart saves the computer first, and the files are there after', async () => {
  test.setTimeout(10 * 60_000);
  await page.goto(server.url);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
  });
  expect(await version()).toBe('Stackdocs 0.1.0-update-a');
  await run('clear; echo kept-across-the-update > /workspace/before-update.txt && sync && echo WROTE-$((6*7))', /WROTE-42/);

  // The new version is deployed; the open app finds it (it also looks by itself every hour).
  server.setRoot(builds.b);
  const loads: string[] = [];
  page.on('load', () => loads.push('load'));
  await page.evaluate(async () => void (await navigator.serviceWorker.getRegistration())?.update());
  const notice = page.getByRole('status', { name: 'Update' });
  await expect(notice).toContainText('A new version of Stackdocs is ready.', { timeout: 2 * 60_000 });
  // Nothing reloads under the user: still the old version, still working.
  await page.waitForTimeout(2_000);
  expect(loads).toEqual([]);
  expect(await version()).toBe('Stackdocs 0.1.0-update-a');

  const said: string[] = [];
  page.on('console', (message) => said.push(message.text()));
  await notice.getByRole('button', { name: 'Restart' }).click();
  await expect.poll(() => loads.length, { timeout: 2 * 60_000 }).toBe(1);
  expect(said.some((text) => text.startsWith('update: the computer is saved and the stack closed'))).toBe(true);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await expect(page.getByRole('status', { name: 'Update' })).toHaveCount(0);
  expect(await version()).toBe('Stackdocs 0.1.0-update-b');

  // Saved before the restart: the computer wakes from that state, with the file.
  await run('clear; cat /workspace/before-update.txt', /kept-across-the-update/);
  await expect(chip()).toContainText(/woke in/);
});
