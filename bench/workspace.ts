// stack.workspace_200mb: what 200 MB of user files under /workspace cost, measured in the app
// (production build, one tab, the local proxy). The computer is started and saved once; then 200
// MB of files are put into the stack's folder (ten of 20 MB, as an import or uploads leave them),
// the guest lists and hashes every one through the 9p share (checked against the page's own
// hashes), and the computer is saved again. The value is how much the saved state grew; the
// renderers' memory (PSS) growth and the guest's read speed are beside it. Goal: each < 10 MB.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { chromiumMemory } from './app-memory.ts';
import { report, round } from './stats.ts';

const FILES = 10;
const FILE_MB = 20;

/** The saved state's size and time, from the stack's folder. */
function savedState(page: Page): Promise<{ size: number; lastModified: number } | null> {
  return page.evaluate(async () => {
    try {
      let dir = await navigator.storage.getDirectory();
      for (const part of ['stacks', 'default', '.os', 'vm']) dir = await dir.getDirectoryHandle(part);
      const file = await (await dir.getFileHandle('state.bin')).getFile();
      return { size: file.size, lastModified: file.lastModified };
    } catch {
      return null;
    }
  });
}

/** Waits for the quiet-time save after `since` (the computer saves itself 4 s after the last command). */
async function savedAfter(page: Page, since: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const state = await savedState(page);
    if (state && state.lastModified > since) {
      await page.waitForTimeout(1000);
      return (await savedState(page))!.size;
    }
    if (Date.now() > deadline) throw new Error('the computer did not save itself within 2 minutes');
    await page.waitForTimeout(500);
  }
}

export async function benchWorkspace(): Promise<void> {
  const fake = await startFakeModel({ port: 0 });
  const stack = await serveStack({ appPort: 4199, proxyPort: 8811, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const profile = mkdtempSync(join(tmpdir(), 'stackdocs-bench-workspace-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, viewport: { width: 1280, height: 800 } });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(stack.appUrl);
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Terminal' }).click();
    await page.getByRole('status', { name: 'Computer' }).filter({ hasText: /ready/ }).waitFor({ timeout: 600_000 });
    const terminal = page.getByRole('region', { name: 'Terminal: root shell on the computer' });
    const run = async (command: string, marker: RegExp, timeout = 300_000) => {
      await terminal.click();
      await page.keyboard.type(`clear; ${command}\n`);
      await terminal.locator('.xterm-rows').filter({ hasText: marker }).waitFor({ timeout });
      return (await terminal.locator('.xterm-rows').innerText()).replace(/\s+/g, ' ');
    };
    await run('ls /workspace; echo "READY""-1"', /READY-1/);
    const before = await savedAfter(page, Date.now() - 1000);
    await page.waitForTimeout(5000);
    const memoryBefore = chromiumMemory(profile).renderersMb;

    // 200 MB of files in the stack's folder, each with its own bytes; the page hashes what it wrote.
    const written = await page.evaluate(
      async ({ files, mb }) => {
        let dir = await navigator.storage.getDirectory();
        for (const part of ['stacks', 'default', 'bulk']) dir = await dir.getDirectoryHandle(part, { create: true });
        const lines: string[] = [];
        for (let f = 0; f < files; f++) {
          const bytes = new Uint8Array(mb * 1024 * 1024);
          let x = 0x9e3779b9 ^ (f + 1);
          const words = new Uint32Array(bytes.buffer);
          for (let i = 0; i < words.length; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            words[i] = x >>> 0;
          }
          const name = `part-${String(f).padStart(2, '0')}.bin`;
          const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
          await writable.write(bytes);
          await writable.close();
          const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
          lines.push(`${[...digest].map((b) => b.toString(16).padStart(2, '0')).join('')}  ${name}\n`);
        }
        return lines.join('');
      },
      { files: FILES, mb: FILE_MB },
    );
    const expected = createHash('sha256').update(written).digest('hex');

    const began = Date.now();
    const out = await run(`cd /workspace/bulk && echo "FILES=$(ls -la | grep -c ' part-')" && echo "ALL=$(sha256sum part-* | sha256sum | cut -c1-64)" && cd /`, /ALL=[0-9a-f]{64}/, 900_000);
    const hashedMs = Date.now() - began;
    const seen = Number(/FILES=(\d+)/.exec(out)?.[1]);
    const all = /ALL=([0-9a-f]{64})/.exec(out)?.[1];
    if (seen !== FILES || all !== expected) throw new Error(`the guest saw ${seen} files, hash ${all} (expected ${FILES}, ${expected})`);
    const after = await savedAfter(page, Date.now() - 1000);
    await page.waitForTimeout(5000);
    const memoryAfter = chromiumMemory(profile).renderersMb;
    report({
      bench: 'stack.workspace_200mb',
      value: round((after - before) / 1e6, 1),
      unit: 'MB',
      n: 1,
      state_before_mb: round(before / 1e6, 1),
      state_after_mb: round(after / 1e6, 1),
      memory_growth_mb: round(memoryAfter - memoryBefore, 0),
      renderers_before_mb: round(memoryBefore, 0),
      renderers_after_mb: round(memoryAfter, 0),
      guest_ls_and_sha256_ms: hashedMs,
      guest_read_mb_s: round((FILES * FILE_MB * 1.048576) / (hashedMs / 1000), 1),
      checked: `ls -la sees ${seen} files; sha256sum of each matches the page's`,
      goal: 'state and memory each grow < 10 MB',
    });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    await stack.close();
    await fake.close();
  }
}
