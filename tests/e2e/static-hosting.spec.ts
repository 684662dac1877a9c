// The built app served as plain files from a sub-path of a static host (a project page, an
// intranet folder): nothing may be asked for at the host's root. It must load, be installable,
// reload offline, run a command in its computer and read a scan by OCR.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect, test } from './test.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';
import { fixture } from '../support/fixtures.ts';
import { serveStatic, type StaticServer } from '../support/static-server.ts';

const PREFIX = '/some/sub/path/';
let server: StaticServer;
let profile: string;
let context: BrowserContext;
let page: Page;

test.beforeAll(async () => {
  server = await serveStatic(join(import.meta.dirname, '..', '..', 'dist'), PREFIX);
  // Persistent and not incognito: Chromium reports installability only for such a profile.
  profile = mkdtempSync(join(tmpdir(), 'stackdocs-static-'));
  context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, viewport: { width: 1280, height: 800 } });
  page = context.pages()[0] ?? (await context.newPage());
});

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
  await terminal.click();
  await page.keyboard.type('echo SUBPATH-$((6*7))\n', { delay: 5 });
  await expect(terminal.locator('.xterm-rows')).toContainText('SUBPATH-42', { timeout: 60_000 });
  expect(server.missing).toEqual([]);
});
