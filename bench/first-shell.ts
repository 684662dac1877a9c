// The computer's first-ever open, as a new user has it: a fresh browser profile, the production
// build served as a static site, the terminal opened, a first command run.
//   vm.first_shell_bytes    MB of the computer's image fetched until that command printed
//   vm.first_shell_20mbps   ms from opening the app to that output, the site served at 20 Mbit/s
//                           with 20 ms added to every request (a server that paces its bytes:
//                           Chromium's throttling does not reach dedicated workers)
//   stack.storage_first_mb  navigator.storage.estimate().usage after that first shell, and
//                           (`complete_mb`) once the whole image was downloaded in the background
//   stack.five_stacks_ratio the storage of five stacks with 3 MB of files each, over that of the
//                           first one alone (its computer used, the image complete);
//                           `computers_used_ratio` once the four others have used their computers too
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { preview, type Plugin } from 'vite';
import { buildApp } from '../scripts/lib/serve.mjs';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { report, round } from './stats.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const PORT = 4195;
const SLOW_PORT = 4196;

/** Paces every response of the server through one shared link of `bitsPerSecond`, after `latencyMs`. */
function slowLink(bitsPerSecond: number, latencyMs: number): Plugin {
  const bytesPerMs = bitsPerSecond / 8 / 1000;
  let linkFreeAt = 0;
  const pace = (bytes: number) => {
    const start = Math.max(Date.now(), linkFreeAt);
    linkFreeAt = start + bytes / bytesPerMs;
    return new Promise((resolve) => setTimeout(resolve, linkFreeAt - Date.now()));
  };
  return {
    name: 'bench:slow-link',
    configurePreviewServer(server) {
      server.middlewares.use((_req: IncomingMessage, res: ServerResponse, next: () => void) => {
        const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
        const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
        let queue: Promise<unknown> = Promise.resolve();
        const size = (chunk: unknown) => (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk ? (chunk as Uint8Array).length : 0);
        res.write = ((chunk: unknown, ...rest: unknown[]) => {
          queue = queue.then(() => pace(size(chunk))).then(() => write(chunk, ...rest)).then(() => res.emit('drain'));
          return false;
        }) as typeof res.write;
        res.end = ((...args: unknown[]) => {
          const chunk = typeof args[0] === 'function' ? undefined : args[0];
          queue = queue.then(() => pace(size(chunk))).then(() => end(...args));
          return res;
        }) as typeof res.end;
        setTimeout(next, latencyMs);
      });
    },
  };
}

interface FirstShell {
  ms: number;
  readyMs: number;
  imageBytes: number;
  /** Every byte the browser fetched until then (the app, its offline cache, the image). */
  allBytes: number;
  usageMb: number;
  page: Page;
  context: BrowserContext;
  profile: string;
}

const usage = (page: Page) => page.evaluate(async () => ((await navigator.storage.estimate()).usage ?? 0) / 1e6);

/** Opens the terminal of the page's stack and runs a command; returns when it printed, with when the computer was ready. */
async function runCommand(page: Page, readyTimeout: number): Promise<number> {
  await page.getByRole('button', { name: 'Add a window' }).click({ timeout: 120_000 });
  await page.getByRole('menuitem', { name: 'Terminal' }).click();
  const terminal = page.getByRole('region', { name: 'Terminal: root shell on the computer' });
  await page.getByRole('status', { name: 'Computer' }).filter({ hasText: /ready/ }).waitFor({ timeout: readyTimeout });
  const readyAt = Date.now();
  await terminal.click();
  await page.keyboard.type('echo first-$((6*7))\n');
  await terminal.locator('.xterm-rows').filter({ hasText: 'first-42' }).waitFor({ timeout: 300_000 });
  return readyAt;
}

/** A stack's own few MB: an incompressible text file, added as a user would. */
async function addFiles(page: Page, name: string): Promise<void> {
  await page.getByLabel('Attach files').setInputFiles([{ name, mimeType: 'text/plain', buffer: Buffer.from(randomBytes(2_250_000).toString('base64')) }]);
  await page.locator('[data-role=notice]').filter({ hasText: `Added ${name}` }).waitFor({ timeout: 60_000 });
}

async function switchTo(page: Page, name: string | null): Promise<void> {
  const panel = page.getByRole('region', { name: 'Stacks' });
  if (!(await panel.isVisible())) await page.getByRole('button', { name: /^Stack: / }).click();
  if (name) {
    await panel.getByRole('button', { name, exact: true }).click();
  } else {
    await panel.getByRole('button', { name: 'New stack…' }).click();
  }
  await page.getByRole('textbox', { name: 'Message' }).waitFor({ timeout: 60_000 });
}

/**
 * Four more stacks beside the first (whose computer is used and whose image is complete), each
 * with 3 MB of files: their storage over the first's, then again once each used its computer.
 */
async function fiveStacks(page: Page): Promise<void> {
  await addFiles(page, 'first-stack.txt');
  await page.waitForTimeout(3000); // the computer's state saved after its command
  const one = await usage(page);
  const names: string[] = [];
  for (let i = 2; i <= 5; i++) {
    await switchTo(page, null);
    const dialog = page.getByRole('dialog', { name: 'New stack' });
    await dialog.getByRole('textbox', { name: 'Name' }).fill(`Stack ${i}`);
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('button', { name: `Stack: Stack ${i}` }).waitFor({ timeout: 60_000 });
    await page.getByRole('textbox', { name: 'Message' }).waitFor({ timeout: 60_000 });
    await addFiles(page, `stack-${i}.txt`);
    names.push(`Stack ${i}`);
  }
  const five = await usage(page);
  const wakes: number[] = [];
  for (const name of names) {
    await switchTo(page, name);
    const opened = Date.now();
    wakes.push((await runCommand(page, 300_000)) - opened);
  }
  // Leaving the last one saves its computer too.
  await switchTo(page, 'My stack');
  await page.waitForTimeout(5000);
  const used = await usage(page);
  report({
    bench: 'stack.five_stacks_ratio',
    value: round(five / one, 2),
    unit: 'x',
    n: 1,
    one_mb: round(one, 1),
    five_mb: round(five, 1),
    computers_used_ratio: round(used / one, 2),
    computers_used_mb: round(used, 1),
    first_opens_ms: wakes,
    goal: '< 1.3',
  });
}

/** Opens the app in a new profile, opens the terminal, runs a command; returns when it printed. */
async function firstShell(url: string): Promise<FirstShell> {
  const profile = mkdtempSync(join(tmpdir(), 'stackdocs-first-shell-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, viewport: { width: 1280, height: 800 } });
  let imageBytes = 0;
  let allBytes = 0;
  context.on('requestfinished', (request) => {
    const image = /\/vm\/[0-9a-f]+\//.test(request.url());
    void request
      .sizes()
      .then((sizes) => {
        allBytes += sizes.responseBodySize;
        if (image) imageBytes += sizes.responseBodySize;
      })
      .catch(() => {});
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const started = Date.now();
  await page.goto(url);
  const readyMs = (await runCommand(page, 600_000)) - started;
  const ms = Date.now() - started;
  await page.waitForTimeout(200); // the last response sizes
  const usageMb = await usage(page);
  return { ms, readyMs, imageBytes, allBytes, usageMb, page, context, profile };
}

export async function benchFirstShell(): Promise<void> {
  const outDir = mkdtempSync(join(tmpdir(), 'stackdocs-bench-dist-'));
  // A static site with no proxy: the computer needs none.
  await buildApp({ proxyUrl: '', quiet: true, outDir });
  const servers = await Promise.all([
    preview({ root, logLevel: 'silent', build: { outDir }, preview: { port: PORT, host: '127.0.0.1', strictPort: true, open: false } }),
    preview({ root, logLevel: 'silent', build: { outDir }, plugins: [slowLink(20e6, 20)], preview: { port: SLOW_PORT, host: '127.0.0.1', strictPort: true, open: false } }),
  ]);
  try {
    const fast = await firstShell(`http://127.0.0.1:${PORT}/`);
    try {
      report({ bench: 'vm.first_shell_bytes', value: round(fast.imageBytes / 1e6, 1), unit: 'MB', n: 1, all_mb: round(fast.allBytes / 1e6, 1), first_shell_ms_localhost: fast.ms, goal: '< 25' });
      // The rest of the image arrives in the background: the storage once it is all there.
      const chip = fast.page.getByRole('status', { name: 'Computer' });
      const waitStarted = Date.now();
      while (/available offline/.test((await chip.textContent()) ?? '') && Date.now() - waitStarted < 600_000) await fast.page.waitForTimeout(1000);
      const completeMb = await usage(fast.page);
      report({ bench: 'stack.storage_first_mb', value: round(fast.usageMb, 1), unit: 'MB', n: 1, complete_mb: round(completeMb, 1), background_download_ms: Date.now() - waitStarted, goal: '< 600', before_layers: 2148 });
      await fiveStacks(fast.page);
    } finally {
      await fast.context.close();
      rmSync(fast.profile, { recursive: true, force: true });
    }
    const slow = await firstShell(`http://127.0.0.1:${SLOW_PORT}/`);
    try {
      report({ bench: 'vm.first_shell_20mbps', value: slow.ms, unit: 'ms', n: 1, ready_ms: slow.readyMs, image_mb: round(slow.imageBytes / 1e6, 1), all_mb: round(slow.allBytes / 1e6, 1), link: '20 Mbit/s, +20 ms a request', goal: '< 12000' });
    } finally {
      await slow.context.close();
      rmSync(slow.profile, { recursive: true, force: true });
    }
  } finally {
    for (const server of servers) await new Promise((resolve) => server.httpServer.close(resolve));
    rmSync(outDir, { recursive: true, force: true });
  }
}
