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
import { makeBulkFiles } from '../tests/support/bulk-files.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { chromiumMemory } from './app-memory.ts';
import { report, round } from './stats.ts';
import { savedState } from '../tests/support/saved-state.ts';

const FILES = 10;
const FILE_MB = 20;

/**
 * The size of the state the computer saved itself after the last command (4 s after it), once
 * at rest (the same state for 10 s), other than `after`.
 */
async function savedAtRest(page: Page, after: string | null): Promise<{ generation: string; size: number }> {
  const deadline = Date.now() + 180_000;
  let still: { generation: string; size: number; since: number } | null = null;
  for (;;) {
    const saved = await savedState(page);
    if (!saved || saved.generation === after) still = null;
    else if (still?.generation !== saved.generation) still = { ...saved, since: Date.now() };
    if (still && Date.now() - still.since >= 10_000) return still;
    if (Date.now() > deadline) throw new Error('the computer did not save itself and rest within 3 minutes');
    await page.waitForTimeout(1000);
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
    const before = await savedAtRest(page, null);
    const memoryBefore = chromiumMemory(profile).renderersMb;

    // 200 MB of files in the stack's folder, each with its own bytes, hashed where they are made:
    // by another tab of the origin (its own renderer, closed before memory is read again), so
    // what making them costs is not counted as the app's.
    const writer = await context.newPage();
    await writer.goto(new URL('favicon.svg', stack.appUrl).href);
    const written = await writer.evaluate(makeBulkFiles, { folder: ['stacks', 'default', 'bulk'], files: FILES, mb: FILE_MB });
    await writer.close();
    const expected = createHash('sha256').update(written).digest('hex');

    const began = Date.now();
    const out = await run(`cd /workspace/bulk && echo "FILES=$(ls -la | grep -c ' part-')" && echo "ALL=$(sha256sum part-* | sha256sum | cut -c1-64)" && cd /`, /ALL=[0-9a-f]{64}/, 900_000);
    const hashedMs = Date.now() - began;
    const seen = Number(/FILES=(\d+)/.exec(out)?.[1]);
    const all = /ALL=([0-9a-f]{64})/.exec(out)?.[1];
    if (seen !== FILES || all !== expected) throw new Error(`the guest saw ${seen} files, hash ${all} (expected ${FILES}, ${expected})`);
    const after = await savedAtRest(page, before.generation);
    const memoryAfter = chromiumMemory(profile).renderersMb;
    // Where the guest's time goes, timed by the guest: 20 MB read through the share (dd, 128 KiB
    // reads), hashed from the share, hashed from its own /tmp (no share).
    const timed = await run(
      [
        'cd /workspace/bulk',
        't() { s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }',
        'cp part-01.bin /tmp/p.bin',
        'echo "SPLIT=$(t dd if=part-00.bin of=/dev/null bs=128k),$(t sha256sum part-00.bin),$(t sha256sum /tmp/p.bin)="',
        'rm /tmp/p.bin; cd /',
      ].join('; '),
      /SPLIT=\d+,\d+,\d+=/,
    );
    const [readMs, hashShareMs, hashTmpMs] = /SPLIT=(\d+),(\d+),(\d+)=/.exec(timed)!.slice(1).map(Number);

    report({
      bench: 'stack.workspace_200mb',
      value: round((after.size - before.size) / 1e6, 1),
      unit: 'MB',
      n: 1,
      state_before_mb: round(before.size / 1e6, 1),
      state_after_mb: round(after.size / 1e6, 1),
      memory_growth_mb: round(memoryAfter - memoryBefore, 0),
      renderers_before_mb: round(memoryBefore, 0),
      renderers_after_mb: round(memoryAfter, 0),
      guest_ls_and_sha256_ms: hashedMs,
      guest_read_mb_s: round((FILES * FILE_MB * 1.048576) / (hashedMs / 1000), 1),
      guest_20mb_dd_share_ms: readMs,
      guest_20mb_sha256_share_ms: hashShareMs,
      guest_20mb_sha256_tmp_ms: hashTmpMs,
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
