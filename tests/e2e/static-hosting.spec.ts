// The built app served as plain files from a sub-path of a static host (a project page, an
// intranet folder), with no proxy anywhere: nothing may be asked for at the host's root. It must
// load, be installable, reload offline, run a command in its computer, read a scan by OCR, and
// play the recorded demo offline to a table and a CSV, labelled on every screenshot; and when the
// host publishes a new version, tell the open app, which restarts into it only after its
// computer saved itself; a kiosk tells its visitors nothing and starts over into it when idle.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Papa from 'papaparse';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { buildApp } from '../../scripts/lib/serve.mjs';
import { expect, test } from './test.ts';
import { typeInTerminal } from './app.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';
import { fixture } from '../support/fixtures.ts';
import { serveStatic, type StaticServer } from '../support/static-server.ts';

const PREFIX = '/some/sub/path/';
let server: StaticServer;
let profile: string;
let context: BrowserContext;
let page: Page;

test.beforeAll(async () => {
  test.setTimeout(3 * 60_000);
  // Its own build, made as for a static host: no proxy address baked in. Served under a name that
  // is not this machine's, so the app takes it for any host (own key, or the demo).
  const dist = join(import.meta.dirname, '..', '..', 'test-results', 'static-dist');
  await buildApp({ proxyUrl: '', quiet: true, outDir: dist });
  server = await serveStatic(dist, PREFIX, 'stackdocs.localhost');
  // Persistent and not incognito: Chromium reports installability only for such a profile.
  profile = mkdtempSync(join(tmpdir(), 'stackdocs-static-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, viewport: { width: 1280, height: 800 } });
  page = context.pages()[0] ?? (await context.newPage());
});

/**
 * The host publishes a new version: a build of its own with that version number, served from
 * now on. The app asks for one every hour and when it comes back online; the test asks now.
 */
async function publishVersion(version: string): Promise<void> {
  // Known issue: while the computer's image still downloads in the background, "Restart" has been
  // seen to stay at "Saving the computer, then restarting…" for minutes (the page's reload never
  // committed) in two runs of five. Not understood yet; the tests update a computer that is
  // fully in this browser, as the earlier tests of this file leave it.
  await expect(page.getByRole('status', { name: 'Computer' })).not.toContainText('available offline', { timeout: 6 * 60_000 });
  const out = join(import.meta.dirname, '..', '..', 'test-results', `static-dist-${version}`);
  process.env.STACKDOCS_VERSION = version;
  try {
    await buildApp({ proxyUrl: '', quiet: true, outDir: out });
  } finally {
    delete process.env.STACKDOCS_VERSION;
  }
  server.publish(out);
  await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())!.update());
}

test.afterAll(async () => {
  await context?.close().catch(() => {});
  await server?.close();
  rmSync(profile, { recursive: true, force: true });
});

test('served from a sub-path: loads with nothing asked of the host root, installs, reloads offline', async () => {
  test.setTimeout(120_000);
  await page.goto(server.url);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
  });
  expect(server.missing).toEqual([]);
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.scope);
  expect(scope).toBe(server.url);

  const cdp = await context.newCDPSession(page);
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] };
  expect(installabilityErrors).toEqual([]);
  const manifest = (await cdp.send('Page.getAppManifest')) as { url: string; errors: unknown[] };
  expect(manifest.url).toBe(`${server.url}manifest.webmanifest`);
  expect(manifest.errors).toEqual([]);

  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await context.setOffline(false);
});

test('a new stack offers sample documents and first requests; once it has documents, never again', async () => {
  test.setTimeout(120_000);
  await page.goto(server.url);
  const start = page.getByRole('region', { name: 'Getting started' });
  await start.getByRole('button', { name: 'Try it with sample documents' }).click();
  for (const name of ['harbour-city-plumbing-invoice.pdf', 'northwind-logistics-invoice.pdf', 'daily-grind-receipt-scan.jpg']) {
    await expect(page.locator('[data-role=notice]').filter({ hasText: `Read ${name}` })).toBeVisible({ timeout: 90_000 });
  }
  await start.getByRole('button', { name: 'Extract these invoices into a table' }).click();
  await expect(page.getByRole('textbox', { name: 'Message' })).toHaveValue('Extract these invoices into a table');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeFocused();
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read daily-grind-receipt-scan.jpg' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Getting started' })).toHaveCount(0);
  expect(server.missing).toEqual([]);
});

test('served from a sub-path: the terminal runs a command and a scan is read by OCR', async () => {
  test.setTimeout(6 * 60_000);
  await page.goto(server.url);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await page.getByLabel('Attach files').setInputFiles([{ name: 'plain-1_scan.jpg', mimeType: 'image/jpeg', buffer: fixture('plain-1_scan.jpg') }]);
  await expect(page.locator('[data-role=notice]').filter({ hasText: 'Read plain-1_scan.jpg: 1 page of text.' })).toBeVisible({ timeout: 90_000 });

  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Terminal' }).click();
  const terminal = page.getByRole('region', { name: 'Terminal: root shell on the computer' });
  await expect(page.getByRole('status', { name: 'Computer' })).toContainText(/ready/i, { timeout: 5 * 60_000 });
  await typeInTerminal(page, terminal, 'echo SUBPATH-$((6*7))\n');
  await expect(terminal.locator('.xterm-rows')).toContainText('SUBPATH-42', { timeout: 60_000 });
  // The rest of the computer's system comes down in the background; the chip counts it until it
  // is all in this browser (the next test plays the demo offline, pandas and all, which proves it).
  await expect(page.locator('.computer-chip-offline')).toHaveCount(0, { timeout: 4 * 60_000 });
  expect(server.missing).toEqual([]);
});

test('with no model, the recorded demo plays offline to a table and a CSV, labelled on every screenshot', async ({}, testInfo) => {
  test.setTimeout(5 * 60_000);
  await context.setOffline(true);
  await page.reload();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  const banner = page.getByRole('status', { name: 'Recorded demo' });
  let shots = 0;
  const shot = async (name: string) => {
    await expect(banner).toBeVisible();
    await expect(banner).toContainText('Recorded demo — the replies are pre-recorded, not from a model');
    await page.screenshot({ path: testInfo.outputPath(`demo-${++shots}-${name}.png`) });
  };

  const noModel = page.locator('.model-banner');
  await expect(noModel).toContainText('No model connected');
  await expect(banner).toHaveCount(0);
  await noModel.getByRole('button', { name: 'Play the recorded demo' }).click();
  await shot('started');
  await expect(page.locator('[data-role=user][data-recorded]').last()).toContainText('Extract these invoices into a table');

  const table = page.getByRole('region', { name: 'Table window: Extracted data' });
  await expect(table.locator('[data-row-id]')).toHaveCount(3, { timeout: 60_000 });
  for (const vendor of ['Harbour City Plumbing', 'Northwind Logistics Inc.', 'The Daily Grind Cafe']) await expect(table.getByRole('cell', { name: vendor })).toBeVisible();
  await shot('table');

  const download = page.getByRole('button', { name: 'Download invoices.csv' });
  await expect(download).toBeVisible({ timeout: 60_000 });
  const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
  const rows = Papa.parse<string[]>(readFileSync((await file.path())!, 'utf8').trim()).data;
  expect(rows[0]).toEqual(['Document', 'Vendor', 'Invoice number', 'Date', 'Currency', 'Subtotal', 'Tax', 'Total']);
  // The three were saved at once: rows come in the order they finished.
  expect(rows.slice(1).map((row) => [row[1], row[4], row[7]]).sort()).toEqual([
    ['Harbour City Plumbing', 'AUD', '3366.32'],
    ['Northwind Logistics Inc.', 'USD', '22945.24'],
    ['The Daily Grind Cafe', 'GBP', '279.04'],
  ]);
  await shot('download');

  // The computer really ran pandas over the exported file: the recording's last turn expects its
  // output ("3 documents, 3 currencies") and would have stopped the demo without it.
  await expect(banner).toHaveAttribute('data-demo-state', 'finished', { timeout: 3 * 60_000 });
  await expect(page.locator('[data-role=tool].tool--error')).toHaveCount(0);
  await expect(page.locator('[data-role=assistant][data-recorded]').last()).toContainText('as pandas added them up on your computer');
  await expect(page.getByRole('region', { name: 'Chart window: Totals by vendor' })).toBeVisible();
  await shot('finished');
  expect(await page.locator('[data-role=assistant]:not([data-recorded])').count()).toBe(0);
  expect(server.missing).toEqual([]);
  await context.setOffline(false);
});

test('a new version published while the app is open: told, and "Restart" waits for the computer to save itself; a file written just before is there after', async () => {
  test.setTimeout(8 * 60_000);
  await page.goto(server.url);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  const chip = page.getByRole('status', { name: 'Computer' });
  const terminal = page.getByRole('region', { name: 'Terminal: root shell on the computer' });
  if (!(await terminal.isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
  }
  await expect(chip).toContainText(/ready/i, { timeout: 3 * 60_000 });
  // The marker is printed after the file is written (quotes split it, so the typed line never matches).
  await typeInTerminal(page, terminal, 'clear; echo kept-across-the-update > /workspace/before-update.txt && echo WRO""TE\n');
  await expect(terminal.locator('.xterm-rows')).toContainText('WROTE', { timeout: 60_000 });
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const before = (await page.locator('.settings-version').textContent())!;
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  // The host publishes the next version: a build of its own, with another version number.
  await publishVersion('99.0.0-next');
  const notice = page.getByRole('status', { name: 'New version' });
  await expect(notice).toContainText('A new version of Stackdocs is ready.', { timeout: 60_000 });
  // Nothing restarts by itself: the page stays, the computer runs.
  await page.waitForTimeout(3_000);
  await expect(chip).toContainText(/ready/i);

  // What the chip says, with when, up to the reload: "suspended" must come before it.
  const seen: { text: string; at: number }[] = [];
  await page.exposeFunction('chipSaid', (text: string) => seen.push({ text, at: Date.now() }));
  await page.evaluate(() => {
    const element = document.querySelector('.computer-chip')!;
    const said = (window as unknown as { chipSaid(text: string): void }).chipSaid;
    new MutationObserver(() => said(element.textContent ?? '')).observe(element, { subtree: true, childList: true, characterData: true });
  });
  let reloadedAt = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame() && !reloadedAt) reloadedAt = Date.now();
  });
  await notice.getByRole('button', { name: 'Restart' }).click();
  await expect
    .poll(() => reloadedAt, { timeout: 3 * 60_000 })
    .toBeGreaterThan(0)
    .catch(async (error: Error) => {
      const said = await notice.textContent().catch(() => '(gone)');
      throw new Error(`no reload after Restart; the notice says: ${said}; the chip said: ${seen.map(({ text }) => text).join(' | ')}`, { cause: error });
    });
  const suspended = seen.find(({ text }) => /suspended/i.test(text));
  expect(suspended, `the chip said: ${seen.map(({ text }) => text).join(' | ')}`).toBeDefined();
  expect(suspended!.at).toBeLessThan(reloadedAt);

  // The new version runs; the computer wakes where it was, with the file.
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await expect(notice).toHaveCount(0);
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await expect(page.locator('.settings-version')).toHaveText('Stackdocs 99.0.0-next');
  expect(before).not.toBe('Stackdocs 99.0.0-next');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  if (!(await terminal.isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
  }
  await expect(chip).toContainText(/woke in/i, { timeout: 3 * 60_000 });
  await typeInTerminal(page, terminal, 'clear; sed "s/^/GOT=/" /workspace/before-update.txt\n');
  await expect(terminal.locator('.xterm-rows')).toContainText('GOT=kept-across-the-update', { timeout: 60_000 });
  expect(server.missing).toEqual([]);
});

test('a kiosk never shows a visitor the update notice: it starts over into the new version after its idle time', async () => {
  test.setTimeout(6 * 60_000);
  // Playwright's clock, so the idle time passes at once (time still runs on its own in between).
  await page.clock.install();
  await page.goto(server.url);
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const setup = page.getByRole('region', { name: 'Kiosk mode' });
  await setup.getByLabel('Owner PIN (6 to 12 digits)').fill('135791');
  await setup.getByLabel('PIN again').fill('135791');
  await setup.getByLabel('Reset after idle (minutes)').fill('2');
  await setup.getByRole('button', { name: 'Start kiosk mode' }).click();
  await expect(page.getByRole('button', { name: 'Owner' })).toBeVisible({ timeout: 3 * 60_000 });
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeEnabled({ timeout: 30_000 });

  // The host publishes another version while a visitor is at the kiosk.
  await publishVersion('99.0.1-kiosk');
  await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.waiting?.state ?? 'none'), { timeout: 60_000 }).toBe('installed');
  await page.getByRole('textbox', { name: 'Message' }).fill('a visitor typing');
  await page.waitForTimeout(2_000);
  await expect(page.getByRole('status', { name: 'New version' })).toHaveCount(0);

  // The visitor leaves: after the idle time and the countdown the kiosk starts over, in the new version.
  let reloaded = false;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) reloaded = true;
  });
  await page.clock.fastForward('02:01');
  await expect(page.getByRole('alertdialog')).toContainText('Starting over for the next visitor in');
  await page.clock.fastForward('00:21');
  await expect
    .poll(() => reloaded, { timeout: 60_000 })
    .toBe(true)
    .catch(async (error: Error) => {
      const state = await page
        .evaluate(async () => {
          const registration = await navigator.serviceWorker.getRegistration();
          return `active ${registration?.active?.state}, waiting ${registration?.waiting?.state ?? 'none'}, installing ${registration?.installing?.state ?? 'none'}, controller ${navigator.serviceWorker.controller?.state}, countdown ${document.querySelector('.kiosk-countdown')?.textContent ?? 'none'}`;
        })
        .catch((e: Error) => e.message);
      throw new Error(`the kiosk did not start over: ${state}`, { cause: error });
    });
  await expect(page.getByRole('button', { name: 'Owner' })).toBeVisible({ timeout: 60_000 });
  await expect(page.getByRole('textbox', { name: 'Message' })).toHaveValue('', { timeout: 30_000 });
  await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.waiting?.state ?? 'none')).toBe('none');

  // The owner leaves kiosk mode with the PIN; Settings names the version.
  await page.getByRole('button', { name: 'Owner' }).click();
  await page.getByLabel('Owner PIN').fill('135791');
  await page.getByRole('button', { name: 'Leave kiosk mode' }).click();
  await page.getByRole('button', { name: 'Settings', exact: true }).click({ timeout: 60_000 });
  await expect(page.locator('.settings-version')).toHaveText('Stackdocs 99.0.1-kiosk');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  expect(server.missing).toEqual([]);
});
