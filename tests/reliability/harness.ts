// What the reliability scenarios share: a real Chromium with a persistent profile that can be
// killed with SIGKILL and opened again, reading a stack's files out of OPFS once the app is gone,
// and checking its databases with Debian's sqlite3 — outside the app, so the app cannot vouch for
// itself.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { writeFully } from '../../vm/disk.ts';
import { BLOCK_SIZE, Overlay } from '../../vm/disk/overlay.ts';
import type { ImageManifest } from '../../vm/image.ts';
import { openNodeSyncFile } from '../../vm/node-file.ts';
import { chromiumArgs, chromiumPath } from '../support/chromium.ts';

export interface Browser {
  profile: string;
  context: BrowserContext;
  page: Page;
}

/** One scenario's tally: what the reliability table reports. */
export interface ScenarioResult {
  scenario: string;
  runs: number;
  failures: number;
  /** Acknowledged rows or files missing afterwards (must be 0). */
  lost: number;
  /** Stacks that did not open, or whose databases or files did not check clean (must be 0). */
  corrupt: number;
  /** The slowest reopen after a kill, or the slowest answer, in ms. */
  slowestMs: number;
  notes: string[];
}

export function newResult(scenario: string): ScenarioResult {
  return { scenario, runs: 0, failures: 0, lost: 0, corrupt: 0, slowestMs: 0, notes: [] };
}

export function newProfile(): string {
  return mkdtempSync(join(tmpdir(), 'stackdocs-reliability-'));
}

/** Deletes a profile once its browser is closed (each holds the computer's 2 GB disk). */
export function disposeProfile(profile: string): void {
  rmSync(profile, { recursive: true, force: true });
}

export async function launch(profile: string, baseURL: string): Promise<Browser> {
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, baseURL, viewport: { width: 1280, height: 800 } });
  // Playwright's library waits 30 s for an element by default, but under the e2e runner it waits
  // without limit (the test's timeout rules): a check that expects an element may be absent (a tab
  // with no message box) would then hang the test. One limit in both places.
  context.setDefaultTimeout(30_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return { profile, context, page };
}

/** The profile's Chromium processes. */
export function browserPids(profile: string): number[] {
  const found = spawnSync('pgrep', ['-f', `user-data-dir=${profile}`], { encoding: 'utf8' });
  return found.stdout.trim().split('\n').filter(Boolean).map(Number);
}

/** Every Chromium process of the profile's resident memory, in MB (Linux /proc). */
export function residentMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024);
}

/** SIGKILL now, synchronously: every one of `pids` (no unload, no flush, no goodbye). */
export function killNow(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** SIGKILL every process of the profile's Chromium, then lets Playwright notice. */
export async function kill(browser: Browser): Promise<void> {
  killNow(browserPids(browser.profile));
  await browser.context.close().catch(() => {});
}

/** Opens the app and waits until the chat takes input; returns how long that took. */
export async function openApp(page: Page, path = '/'): Promise<number> {
  const started = performance.now();
  await page.goto(path);
  await page.getByRole('textbox', { name: 'Message' }).waitFor({ state: 'visible', timeout: 60_000 });
  await page.waitForFunction(() => !(document.querySelector('textarea[aria-label="Message"], input[aria-label="Message"]') as HTMLTextAreaElement | null)?.disabled, null, { timeout: 60_000 });
  return performance.now() - started;
}

/**
 * A stack's files (paths under `stacks/<stack>/`), read from OPFS on a page of the app's origin
 * that does not run the app, so no worker holds them. Missing files are null.
 */
export async function readStackFiles(page: Page, stack: string, paths: string[]): Promise<Map<string, Buffer | null>> {
  await page.goto('/manifest.webmanifest');
  const found = await page.evaluate(
    async ({ stack, paths }) => {
      const out: Record<string, string | null> = {};
      const root = await navigator.storage.getDirectory();
      for (const path of paths) {
        try {
          let dir = await (await root.getDirectoryHandle('stacks')).getDirectoryHandle(stack);
          const parts = path.split('/');
          for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
          const file = await (await dir.getFileHandle(parts.at(-1)!)).getFile();
          const bytes = new Uint8Array(await file.arrayBuffer());
          let binary = '';
          for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
          out[path] = btoa(binary);
        } catch {
          out[path] = null;
        }
      }
      return out;
    },
    { stack, paths },
  );
  return new Map(Object.entries(found).map(([path, base64]) => [path, base64 === null ? null : Buffer.from(base64, 'base64')]));
}

function ensureSqlite(): void {
  if (existsSync('/usr/bin/sqlite3')) return;
  if (process.getuid?.() === 0) spawnSync('apt-get', ['install', '-y', '-qq', 'sqlite3'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!existsSync('/usr/bin/sqlite3')) throw new Error('Debian sqlite3 is needed to check the databases: apt-get install sqlite3');
}

/**
 * A database (and its rollback journal, when the kill left one) as the next open will see it:
 * `PRAGMA integrity_check` ("ok" when whole), and the answer to `sql` (one value per line).
 */
export function checkDatabase(db: Buffer, journal: Buffer | null, sql?: string): { integrity: string; rows: string[] } {
  ensureSqlite();
  const dir = mkdtempSync(join(tmpdir(), 'stackdocs-db-'));
  try {
    writeFileSync(join(dir, 'x.db'), db);
    if (journal?.length) writeFileSync(join(dir, 'x.db-journal'), journal);
    const query = (statement: string) => execFileSync('sqlite3', ['-bail', join(dir, 'x.db'), statement], { encoding: 'utf8' }).trim();
    const integrity = query('PRAGMA integrity_check;');
    return { integrity, rows: sql ? query(sql).split('\n').filter(Boolean) : [] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A stack's two databases, checked: their integrity and whether each opened. */
export async function checkStackDatabases(page: Page, stack: string, transcriptSql: string): Promise<{ transcript: string; memory: string; rows: string[] }> {
  const files = await readStackFiles(page, stack, ['.os/memory/transcript.db', '.os/memory/transcript.db-journal', '.os/memory/memory.db', '.os/memory/memory.db-journal']);
  const transcriptDb = files.get('.os/memory/transcript.db');
  const memoryDb = files.get('.os/memory/memory.db');
  if (!transcriptDb || !memoryDb) return { transcript: transcriptDb ? 'ok' : 'missing', memory: memoryDb ? 'ok' : 'missing', rows: [] };
  const transcript = checkDatabase(transcriptDb, files.get('.os/memory/transcript.db-journal') ?? null, transcriptSql);
  const memory = checkDatabase(memoryDb, files.get('.os/memory/memory.db-journal') ?? null);
  return { transcript: transcript.integrity, memory: memory.integrity, rows: transcript.rows };
}

/**
 * The computer's disk as the killed browser left it, assembled in `scratch` the way the app reads
 * it: the image's chunks (from `imageDir`, what the build served) under the stack's overlay,
 * whose two files are found in the profile's OPFS by their headers (disk/overlay.ts). Null when
 * the profile holds no overlay.
 */
export function diskImageIn(profile: string, scratch: string, imageDir = join(process.cwd(), 'vm-images', 'out', 'latest')): string | null {
  const heads = new Map<string, { path: string; size: number; pairing: string }[]>([['SDOVMAP1', []], ['SDOVDAT1', []]]);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && statSync(path).size >= 64) {
        const fd = openSync(path, 'r');
        const head = Buffer.alloc(40);
        readSync(fd, head, 0, 40, 0);
        closeSync(fd);
        heads.get(head.toString('latin1', 0, 8))?.push({ path, size: statSync(path).size, pairing: head.toString('hex', 24, 40) });
      }
    }
  };
  walk(join(profile, 'Default', 'File System'));
  // The stack whose overlay holds the most (the scenarios use one stack).
  const data = heads.get('SDOVDAT1')!.sort((a, b) => b.size - a.size).find((d) => heads.get('SDOVMAP1')!.some((m) => m.pairing === d.pairing));
  const map = data && heads.get('SDOVMAP1')!.find((m) => m.pairing === data.pairing);
  if (!data || !map) return null;

  const manifest = JSON.parse(readFileSync(join(imageDir, 'manifest.json'), 'utf8')) as ImageManifest;
  const image = join(scratch, 'disk-assembled.img');
  const out = openNodeSyncFile(image);
  out.truncate(0);
  out.truncate(manifest.disk.size);
  for (const chunk of manifest.disk.chunks) writeFully(out, gunzipSync(readFileSync(join(imageDir, chunk.file))), chunk.index * manifest.disk.chunkSize);
  // Copies: opening an overlay may trim a slot the map never recorded, and the profile stays as the browser left it.
  copyFileSync(data.path, join(scratch, 'overlay.data'));
  copyFileSync(map.path, join(scratch, 'overlay.map'));
  const overlayData = openNodeSyncFile(join(scratch, 'overlay.data'));
  const overlayMap = openNodeSyncFile(join(scratch, 'overlay.map'));
  try {
    const overlay = Overlay.open(overlayData, overlayMap, manifest.disk.size);
    const block = new Uint8Array(BLOCK_SIZE);
    for (const index of overlay.blocks()) {
      overlay.read(index, block);
      writeFully(out, block, index * BLOCK_SIZE);
    }
  } finally {
    out.close();
    overlayData.close();
    overlayMap.close();
    rmSync(join(scratch, 'overlay.data'), { force: true });
    rmSync(join(scratch, 'overlay.map'), { force: true });
  }
  return image;
}

/**
 * e2fsck on a copy of the disk image, outside the browser: first the journal is replayed (what
 * the kernel does when it mounts the disk after a crash), then a forced read-only check must find
 * nothing. Returns null when clean, else what e2fsck said.
 */
export function checkDiskImage(image: string, scratch: string): string | null {
  const copy = join(scratch, 'disk-check.img');
  copyFileSync(image, copy);
  try {
    // journal_only replays and stops; but facing a broken journal it goes on to repair the whole
    // disk (answering yes): anything beyond a clean replay (exit 0, no question asked) is damage.
    const replay = spawnSync('/sbin/e2fsck', ['-E', 'journal_only', '-y', copy], { encoding: 'utf8' });
    const said = `${replay.stdout}${replay.stderr}`;
    if (replay.status !== 0 || /\? yes/.test(said)) return `journal replay: exit ${replay.status}: ${said.trim().slice(0, 400)}`;
    const check = spawnSync('/sbin/e2fsck', ['-f', '-n', copy], { encoding: 'utf8' });
    return check.status === 0 ? null : `e2fsck -fn: exit ${check.status}: ${(check.stdout + check.stderr).trim().slice(0, 400)}`;
  } finally {
    rmSync(copy, { force: true });
  }
}
