// Renders docs/screenshot.png from the production build, as a user would see it: the recorded
// demo played on the sample documents (their windows, the table it extracts and its chart, the
// CSV), then the terminal listing the files on the computer. Nothing in it is staged by hand.
// Run with `npm run screenshot` after a UI change.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { ensureFixtures } from '../tests/fixtures/generate.ts';
import { serveStatic } from '../tests/support/static-server.ts';
import { buildApp } from './lib/serve.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'docs', 'screenshot.png');
const dist = join(root, '.cache', 'screenshot-dist');
await ensureFixtures();
// Built as for a static host with no proxy: no model, so the recorded demo is what it offers.
await buildApp({ proxyUrl: '', quiet: true, outDir: dist });
const server = await serveStatic(dist, '/', 'stackdocs.localhost');
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(server.url);
  await page.locator('.model-banner').getByRole('button', { name: 'Play the recorded demo' }).click();
  const banner = page.getByRole('status', { name: 'Recorded demo' });
  console.log('playing the recorded demo (the first start of the computer takes a minute)…');
  await banner.and(page.locator('[data-demo-state=finished]')).waitFor({ timeout: 5 * 60_000 });

  await page.getByRole('button', { name: 'Add a window' }).click();
  await page.getByRole('menuitem', { name: 'Terminal' }).click();
  const terminal = page.getByRole('region', { name: 'Terminal: root shell on the computer' });
  await terminal.click();
  await page.keyboard.type('clear; cd /workspace; ls -l documents artifacts\n', { delay: 20 });
  await terminal.locator('.xterm-rows').getByText('invoices.csv').waitFor({ timeout: 60_000 }).catch(async (error) => {
    await page.screenshot({ path: '/tmp/shot-fail.png' });
    throw error;
  });

  // What the demo made stays; its label is closed, as a user would once it has finished.
  await banner.getByRole('button', { name: 'Close' }).click();
  // Every window in view, nothing selected, the pointer out of the way.
  await page.getByRole('button', { name: /fit view/i }).click();
  await page.mouse.click(720, 860);
  await page.mouse.move(1100, 500);
  await page.waitForTimeout(800);
  await page.screenshot({ path: out });
  console.log(`${out} written`);
} finally {
  await browser.close();
  await server.close();
  rmSync(dist, { recursive: true, force: true });
}
