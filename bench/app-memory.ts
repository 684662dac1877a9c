// app.renderer_memory_mb: what the app costs a small Chromebook in memory, as the system counts it
// (PSS: each shared page split between the processes that map it). One tab, a new profile, the
// production build with the local proxy; read at each step of a session, once it settled (30 s):
// the app idle; two scans read by OCR (5 s after), and the same two minutes later (the OCR
// engine's idle time passed); the computer ready (a terminal opened); after `import pandas` in
// it (`import_pandas_s`: from typing it to its output, a first import in this computer); after
// two more scans read; then with the tab hidden (5 s after), and hidden for 30 s more
// (the idle computer suspended). `peak_mb`: the most seen, read each second.
// The value is the app's renderer's PSS after the last step: the process running the page and its
// workers (the stack, OCR, pdfjs and VM workers and the service worker are threads of it). Chromium
// runs two more renderers of its own beside any tab, counted in `other_renderers_mb`: its UI's
// (the omnibox popup, `--top-chrome-webui`, ~74 MB) and a spare one kept ready for the next tab
// (~20 MB). `chromium_total_mb` is every Chromium process's. Linux only (/proc).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { fixture } from '../tests/support/fixtures.ts';
import { hideTab } from '../tests/support/hide-tab.ts';
import { REST_AFTER_HIDDEN_MS } from '../app/computer/hidden-tab.ts';
import { report, round } from './stats.ts';

interface Processes {
  /** The renderers running a page's or a service worker's workers: the app's, with one tab open. */
  renderersMb: number;
  /** Chromium's other renderers (its UI's, the spare one). */
  otherRenderersMb: number;
  totalMb: number;
}

/** Whether a renderer runs a dedicated or service worker (the app always runs its stack worker). */
function runsWorkers(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((thread) => /^(DedicatedWorker|ServiceWorker)/.test(readFileSync(`/proc/${pid}/task/${thread}/comm`, 'utf8')));
  } catch {
    return false;
  }
}

/** A process's command line and parent, or null once it is gone. */
function processInfo(pid: number): { cmdline: string; ppid: number } | null {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    // The fields after the command's name (in parentheses, which may hold spaces): state, ppid.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return { cmdline, ppid };
  } catch {
    return null;
  }
}

function pssMb(pid: number): number {
  try {
    const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The PSS of the browser started on `profile` and of every process under it. */
export function chromiumMemory(profile: string): Processes {
  const all = new Map<number, { cmdline: string; ppid: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = processInfo(Number(name));
    if (info) all.set(Number(name), info);
  }
  const browser = [...all].find(([, info]) => info.cmdline.includes(`--user-data-dir=${profile}`) && !info.cmdline.includes('--type='));
  if (!browser) throw new Error(`no Chromium runs on ${profile}`);
  const tree = new Set([browser[0]]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, info] of all) {
      if (!tree.has(pid) && tree.has(info.ppid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  let renderersMb = 0;
  let otherRenderersMb = 0;
  let totalMb = 0;
  for (const pid of tree) {
    const mb = pssMb(pid);
    totalMb += mb;
    if (!all.get(pid)!.cmdline.includes('--type=renderer')) continue;
    if (runsWorkers(pid)) renderersMb += mb;
    else otherRenderersMb += mb;
  }
  return { renderersMb, otherRenderersMb, totalMb };
}

/** The most the app's renderer was seen to hold, read each second while a step settles. */
let peakMb = 0;

/**
 * Memory once the page has been left alone after a step: its saves written, its collections and
 * workers ended. For ~20 s after the computer was used, its memory swings by up to 150 MB (its
 * state saved after 4 s of quiet, written while the emulator runs on; the image's chunks
 * stored): a reading 5 s after a step fell anywhere in that swing. Read each second for
 * `ms`, the last reading kept; the swings go into `peakMb`.
 */
async function settled(page: Page, profile: string, ms = SETTLE_MS): Promise<Processes> {
  let reading = chromiumMemory(profile);
  for (let waited = 0; waited < ms; waited += 1000) {
    await page.waitForTimeout(1000);
    reading = chromiumMemory(profile);
    peakMb = Math.max(peakMb, reading.renderersMb);
  }
  return reading;
}

const SETTLE_MS = 30_000;

export async function benchAppMemory(): Promise<void> {
  peakMb = 0;
  const fake = await startFakeModel({ port: 0 });
  const stack = await serveStack({ appPort: 4197, proxyPort: 8809, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const profile = mkdtempSync(join(tmpdir(), 'stackdocs-bench-memory-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, viewport: { width: 1280, height: 800 } });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(stack.appUrl);
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    const idle = await settled(page, profile);

    // Two scans read by OCR, then the app left alone past the OCR engine's idle time (2 min).
    const readScans = async (round: number) => {
      for (const id of ['plain-1', 'two-column-2']) {
        const name = `${id}_${round}_scan.jpg`;
        await page.getByLabel('Attach files').setInputFiles([{ name, mimeType: 'image/jpeg', buffer: fixture(`${id}_scan.jpg`) }]);
        await page.locator('[data-role=notice]').filter({ hasText: `Read ${name}` }).waitFor({ timeout: 120_000 });
      }
    };
    await readScans(1);
    const scansOnly = await settled(page, profile, 5_000);
    const scansIdle = await settled(page, profile, 125_000);

    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
    await page.getByRole('status', { name: 'Computer' }).filter({ hasText: /ready/ }).waitFor({ timeout: 600_000 });
    const terminal = page.getByRole('region', { name: 'Terminal: root shell on the computer' });
    await terminal.click();
    await page.keyboard.type("echo SHELL-$((6*7))\n");
    await terminal.locator('.xterm-rows').filter({ hasText: 'SHELL-42' }).waitFor({ timeout: 300_000 });
    const ready = await settled(page, profile);

    // Quotes split the marker, so the typed line never matches it.
    const pandasStarted = performance.now();
    await page.keyboard.type(`clear; python3 -c 'import pandas; print("PANDAS" "-OK")'\n`);
    await terminal.locator('.xterm-rows').filter({ hasText: 'PANDAS-OK' }).waitFor({ timeout: 900_000 });
    const pandasSeconds = (performance.now() - pandasStarted) / 1000;
    const pandas = await settled(page, profile);

    await readScans(2);
    const scans = await settled(page, profile);

    // The tab hidden (as when the user switches away): what can be made again gives its memory back.
    await hideTab(page);
    const hidden = await settled(page, profile, 5_000);
    // Hidden a while: the computer, idle, is suspended too (REST_AFTER_HIDDEN_MS, 30 s).
    const hiddenAWhile = await settled(page, profile, REST_AFTER_HIDDEN_MS);

    const mb = (value: number) => round(value, 0);
    report({
      bench: 'app.renderer_memory_mb',
      value: mb(scans.renderersMb),
      unit: 'MB',
      n: 1,
      idle_mb: mb(idle.renderersMb),
      computer_ready_mb: mb(ready.renderersMb),
      after_pandas_mb: mb(pandas.renderersMb),
      import_pandas_s: round(pandasSeconds, 1),
      scans_only_mb: mb(scansOnly.renderersMb),
      scans_only_2_min_later_mb: mb(scansIdle.renderersMb),
      then_hidden_mb: mb(hidden.renderersMb),
      hidden_a_while_mb: mb(hiddenAWhile.renderersMb),
      other_renderers_mb: mb(scans.otherRenderersMb),
      peak_mb: mb(peakMb),
      goal: '< 500',
    });
    report({
      bench: 'app.chromium_total_mb',
      value: mb(scans.totalMb),
      unit: 'MB',
      n: 1,
      idle_mb: mb(idle.totalMb),
      computer_ready_mb: mb(ready.totalMb),
      after_pandas_mb: mb(pandas.totalMb),
      scans_only_mb: mb(scansOnly.totalMb),
      scans_only_2_min_later_mb: mb(scansIdle.totalMb),
      then_hidden_mb: mb(hidden.totalMb),
      hidden_a_while_mb: mb(hiddenAWhile.totalMb),
    });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    await stack.close();
    await fake.close();
  }
}
