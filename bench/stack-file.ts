// stack.export_mb_s / stack.import_mb_s: a stack written to one `.stack` file and read back as a
// new stack, through the stack menu of the production build, in MB of the stack's files a second;
// each beside the raw OPFS write speed of the same number of bytes in the same page (`vs_raw`).
// The export finds the computer at rest (saved since its last use, so its close does not save it
// again); stack.export_just_used_mb_s is the same export a moment after a command in its terminal.
// stack.export_size_fresh: the file of a fresh stack after one command on its computer (MB; needs
// the computer image, else it is not printed). stack.import_peak_mb: the most the browser's
// processes held above the idle tab (PSS, sampled every 250 ms) while it imported a file declaring
// 1 GiB honestly (1,024 MiB of zeros packed a thousandfold), beside the same for the ordinary
// stack stack.import_mb_s imports (`normal_stack_mb`).
// BENCH_BOMB_MIB=2048 declares another size (MiB); BENCH_APP_PORT and BENCH_PROXY_PORT move the
// servers off 4197 and 8811 (another run on this machine holds them).
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strFromU8 } from 'fflate';
import { writeFileSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { unpackStackFile } from '../tests/support/stack-zip.ts';
import { honestBomb } from '../tests/fixtures/hostile-stacks.ts';
import { chromiumMemory } from './app-memory.ts';
import { report, round } from './stats.ts';

const HAS_IMAGE = existsSync(join(import.meta.dirname, '..', 'vm-images', 'out', 'latest', 'manifest.json'));
/** Added to the stack so the speeds are measured over a sizeable file (half random, half text-like). */
const DATA_MB = 48;
const BOMB_MIB = Number(process.env.BENCH_BOMB_MIB ?? 1024);
const APP_PORT = Number(process.env.BENCH_APP_PORT ?? 4197);
const PROXY_PORT = Number(process.env.BENCH_PROXY_PORT ?? 8811);

async function exportStack(page: Page, to: string): Promise<number> {
  await openMenu(page);
  await page.getByRole('region', { name: 'Stacks' }).getByRole('button', { name: 'Export stack…' }).click();
  const dialog = page.getByRole('dialog', { name: /^Export / });
  const started = Date.now();
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 10 * 60_000 }), dialog.getByRole('button', { name: 'Export' }).click()]);
  await dialog.getByRole('status').waitFor({ timeout: 10 * 60_000 });
  const seconds = (Date.now() - started) / 1000;
  await download.saveAs(to);
  await dialog.getByRole('button', { name: 'Open the stack again' }).click();
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  await page.waitForFunction(() => !document.querySelector<HTMLTextAreaElement>('#chat-input')?.disabled);
  return seconds;
}

async function openMenu(page: Page) {
  const panel = page.getByRole('region', { name: 'Stacks' });
  if (!(await panel.isVisible())) await page.getByRole('button', { name: /^Stack: / }).click();
  await panel.waitFor();
}

/** MB/s of writing `bytes` to an OPFS file in 1 MiB writes, as the export and import write theirs. */
function rawOpfsWrite(page: Page, bytes: number): Promise<number> {
  return page.evaluate(async (bytes) => {
    const root = await navigator.storage.getDirectory();
    const chunk = new Uint8Array(1 << 20);
    crypto.getRandomValues(chunk.subarray(0, 65536));
    const started = performance.now();
    const writable = await (await root.getFileHandle('bench-raw.bin', { create: true })).createWritable();
    for (let done = 0; done < bytes; done += chunk.byteLength) await writable.write(chunk.subarray(0, Math.min(chunk.byteLength, bytes - done)));
    await writable.close();
    const seconds = (performance.now() - started) / 1000;
    await root.removeEntry('bench-raw.bin');
    return bytes / 1e6 / seconds;
  }, bytes);
}

async function stackBytes(file: string): Promise<number> {
  const files = await unpackStackFile(readFileSync(file), (name) => name === 'manifest.json');
  const manifest = JSON.parse(strFromU8(files['manifest.json']!)) as { entries: { size: number }[] };
  return manifest.entries.reduce((sum, entry) => sum + entry.size, 0);
}

/** Imports `file` through the stack menu; the seconds from when the page has it to the new stack's page, and the peak memory above `idleMb` meanwhile. */
async function importFile(page: Page, file: string, profile: string, idleMb: number): Promise<{ seconds: number; peakMb: number }> {
  const before = new URL(page.url()).searchParams.get('stack');
  const opened = (url: URL) => /^s-/.test(url.searchParams.get('stack') ?? '') && url.searchParams.get('stack') !== before;
  await openMenu(page);
  await page.getByRole('region', { name: 'Stacks' }).getByLabel('Stack file to open').setInputFiles(file);
  const started = Date.now();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, chromiumMemory(profile).totalMb)), 250);
  try {
    const refused = page.getByRole('dialog', { name: /^Open / }).getByRole('alert');
    await Promise.race([page.waitForURL(opened, { timeout: 10 * 60_000, waitUntil: 'commit' }), refused.waitFor({ timeout: 10 * 60_000 })]);
    if (!opened(new URL(page.url()))) throw new Error(`the import was refused: ${await refused.textContent()}`);
    return { seconds: (Date.now() - started) / 1000, peakMb: Math.max(0, peak - idleMb) };
  } finally {
    clearInterval(sampler);
  }
}

/** The browser's processes once the page has been left alone a few seconds (MB of PSS). */
async function idleMemory(page: Page, profile: string): Promise<number> {
  await page.waitForTimeout(5_000);
  return chromiumMemory(profile).totalMb;
}

export async function benchStackFile(): Promise<void> {
  const fake = await startFakeModel({ port: 0 });
  const stack = await serveStack({ appPort: APP_PORT, proxyPort: PROXY_PORT, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const dir = mkdtempSync(join(tmpdir(), 'stackdocs-bench-stack-'));
  const profile = join(dir, 'profile');
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, acceptDownloads: true });
  try {
    await context.addInitScript(() => {
      delete (Window.prototype as { showSaveFilePicker?: unknown }).showSaveFilePicker;
      delete (window as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(stack.appUrl);
    await page.waitForFunction(() => !document.querySelector<HTMLTextAreaElement>('#chat-input')?.disabled);

    if (HAS_IMAGE) {
      await page.getByRole('button', { name: 'Add a window' }).click();
      await page.getByRole('menuitem', { name: 'Terminal' }).click();
      // The terminal starts the computer: the first start copies the image in, then wakes.
      await page.getByRole('status', { name: 'Computer' }).filter({ hasText: /ready/i }).waitFor({ timeout: 10 * 60_000 });
      await page.getByRole('region', { name: 'Terminal: root shell on the computer' }).click();
      await page.keyboard.type('echo BENCH-$((6*7))\n', { delay: 5 });
      await page.waitForFunction(() => /BENCH-42/.test(document.querySelector('.xterm-rows')?.textContent ?? ''), undefined, { timeout: 10 * 60_000 });
      const fresh = join(dir, 'fresh.stack');
      await exportStack(page, fresh);
      report({ bench: 'stack.export_size_fresh', value: round(statSync(fresh).size / 1e6, 1), unit: 'MB', stack_mb: round((await stackBytes(fresh)) / 1e6, 1), goal: '< 30' });
    } else {
      console.error('stack.export_size_fresh: no computer image is built (vm-images/build.sh), so it is not measured');
    }

    // A sizeable file in the stack: half random bytes, half repetitive text.
    await page.evaluate(async (mb) => {
      const stacks = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks');
      const artifacts = await (await stacks.getDirectoryHandle('default')).getDirectoryHandle('artifacts', { create: true });
      const writable = await (await artifacts.getFileHandle('bench-data.bin', { create: true })).createWritable();
      const random = new Uint8Array(1 << 20);
      const text = new TextEncoder().encode('2026-11-25,ACME GMBH,INV-0001,1234.56,EUR\n'.repeat(24_000)).subarray(0, 1 << 20);
      for (let i = 0; i < mb; i++) {
        if (i % 2 === 0) {
          for (let at = 0; at < random.length; at += 65536) crypto.getRandomValues(random.subarray(at, at + 65536));
          await writable.write(random);
        } else await writable.write(text);
      }
      await writable.close();
    }, DATA_MB);

    if (HAS_IMAGE) {
      // Right after a command: the computer was used since it last saved itself, so the export's
      // close saves it first (stack.export_mb_s below finds it at rest, saved after its last use).
      await page.getByRole('region', { name: 'Terminal: root shell on the computer' }).click();
      await page.keyboard.type('clear; echo USED-$((6*7))\n', { delay: 5 });
      await page.waitForFunction(() => /USED-42/.test(document.querySelector('.xterm-rows')?.textContent ?? ''), undefined, { timeout: 60_000 });
      const used = join(dir, 'used.stack');
      const seconds = await exportStack(page, used);
      const bytes = await stackBytes(used);
      const raw = await rawOpfsWrite(page, bytes);
      const mbS = bytes / 1e6 / seconds;
      report({ bench: 'stack.export_just_used_mb_s', value: round(mbS, 1), unit: 'MB/s', stack_mb: round(bytes / 1e6, 1), raw_opfs_mb_s: round(raw, 1), vs_raw: round(mbS / raw) });
      rmSync(used);
      // At rest: woken by the reopen and left alone, as after the save that follows a few seconds of quiet.
      await page.getByRole('status', { name: 'Computer' }).filter({ hasText: /ready/i }).waitFor({ timeout: 60_000 });
    }
    const file = join(dir, 'bench.stack');
    const exportSeconds = await exportStack(page, file);
    const bytes = await stackBytes(file);
    const rawExport = await rawOpfsWrite(page, bytes);
    const exportMbS = bytes / 1e6 / exportSeconds;
    report({ bench: 'stack.export_mb_s', value: round(exportMbS, 1), unit: 'MB/s', stack_mb: round(bytes / 1e6, 1), file_mb: round(statSync(file).size / 1e6, 1), raw_opfs_mb_s: round(rawExport, 1), vs_raw: round(exportMbS / rawExport), goal_vs_raw: '>= 0.5', computer: HAS_IMAGE ? 'at rest' : 'none' });

    // Timed from when the page has the file (Playwright hands it over the wire first) to the new
    // stack's page being asked for, which happens once the stack is complete.
    const normal = await importFile(page, file, profile, await idleMemory(page, profile));
    const rawImport = await rawOpfsWrite(page, bytes);
    const importMbS = bytes / 1e6 / normal.seconds;
    report({ bench: 'stack.import_mb_s', value: round(importMbS, 1), unit: 'MB/s', stack_mb: round(bytes / 1e6, 1), raw_opfs_mb_s: round(rawImport, 1), vs_raw: round(importMbS / rawImport), goal_vs_raw: '>= 0.5' });

    // A file of 50 KB that declares (and holds) 1 GiB as its computer's disk, on this app's image:
    // what the import costs is its writing, not its size.
    if (!HAS_IMAGE) {
      console.error('stack.import_peak_mb: no computer image is built (vm-images/build.sh), so the 1 GiB disk has no image to lie over; not measured');
      return;
    }
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    const bombFile = join(dir, 'bomb.stack');
    const appImage = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'vm-images', 'out', 'latest', 'manifest.json'), 'utf8')) as { recipeHash: string }).recipeHash;
    writeFileSync(bombFile, await honestBomb(BOMB_MIB, appImage));
    const bomb = await importFile(page, bombFile, profile, await idleMemory(page, profile));
    report({ bench: 'stack.import_peak_mb', value: round(bomb.peakMb, 1), unit: 'MB', declared_mb: round((BOMB_MIB * 2 ** 20) / 1e6, 1), file_mb: round(statSync(bombFile).size / 1e6, 2), seconds: round(bomb.seconds, 1), normal_stack_mb: round(normal.peakMb, 1), normal_stack_size_mb: round(bytes / 1e6, 1), goal: '< 64' });
  } finally {
    await context.close();
    await stack.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
