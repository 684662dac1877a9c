// checkpoint.take_ms / checkpoint.size_mb / checkpoint.restore_ms: a stack's checkpoint after a
// typical mission (the agent runs Python in the computer writing a 1 MB CSV, writes a file and
// opens a table), through the timeline of the production build with the computer running.
// take_ms: "Checkpoint now" clicked to the checkpoint listed (the computer saved, everything that
// changed since the last checkpoint stored); hold_ms: with missions back to back, how long the
// next one waits for its checkpoint before its first change (the stack worker's log); size_mb:
// the room that checkpoint added; restore_ms: "Restore" confirmed to the chat usable again in the reopened stack, and `to_shell_ms` to the
// computer ready. Needs the computer image.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { serveStack } from '../scripts/lib/serve.mjs';
import { startFakeModel } from '../tests/fake-model/server.ts';
import { chromiumArgs, chromiumPath } from '../tests/support/chromium.ts';
import { report, round, summarise } from './stats.ts';

const HAS_IMAGE = existsSync(join(import.meta.dirname, '..', 'vm-images', 'out', 'latest', 'manifest.json'));
const ROUNDS = 3;

const timeline = (page: Page) => page.getByRole('region', { name: 'Timeline window: Timeline' });
const chatReady = (page: Page) => page.waitForFunction(() => !document.querySelector<HTMLTextAreaElement>('#chat-input')?.disabled, undefined, { timeout: 300_000 });

async function send(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** The newest checkpoint's record, read from the stack's folder. */
function newestRecord(page: Page): Promise<{ id: string; added_bytes: number; total_bytes: number }> {
  return page.evaluate(async () => {
    const dir = await (await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle('default')).getDirectoryHandle('.os')).getDirectoryHandle('checkpoints');
    const records: { id: string; created_at: number; added_bytes: number; total_bytes: number }[] = [];
    for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
      if (name.endsWith('.json')) records.push(JSON.parse(await (await (handle as FileSystemFileHandle).getFile()).text()));
    }
    records.sort((a, b) => b.created_at - a.created_at);
    return records[0]!;
  });
}

export async function benchCheckpoint(): Promise<void> {
  if (!HAS_IMAGE) {
    console.error('checkpoint: no computer image (vm-images/build.sh), skipped');
    return;
  }
  const fake = await startFakeModel({ port: 0 });
  const stack = await serveStack({ appPort: 4199, proxyPort: 8813, apiKey: 'test-bench-key', upstream: fake.url, quiet: true });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  try {
    const page = await (await browser.newContext()).newPage();
    // What each checkpoint spent where (the stack worker's own account), beside the figures.
    const logged: string[] = [];
    page.on('console', (message) => {
      if (!/^(checkpoint|computer captured) /.test(message.text())) return;
      console.error(message.text());
      logged.push(message.text());
    });
    await page.goto(stack.appUrl);
    await chatReady(page);
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Timeline' }).click();
    await timeline(page).waitFor();

    const takes: number[] = [];
    const sizes: number[] = [];
    const holds: number[] = [];
    // A typical mission: Python in the computer writes a CSV, the agent writes a note and opens a table.
    const mission = async (round_: number) => {
      await fake.load({
        name: `checkpoint bench ${round_}`,
        turns: [
          {
            reply: {
              content: [
                {
                  type: 'tool_use',
                  name: 'bash',
                  input: { command: `python3 -c "import csv; w = csv.writer(open('/workspace/artifacts/run${round_}.csv', 'w')); [w.writerow([i, i * i, 'row %d' % i]) for i in range(40000)]" && wc -c /workspace/artifacts/run${round_}.csv` },
                },
                { type: 'tool_use', name: 'write', input: { path: `notes/run${round_}.md`, content: `# Run ${round_}\n\n40,000 rows written.\n` } },
                { type: 'tool_use', name: 'create_window', input: { kind: 'table', title: `Run ${round_}`, columns: [{ key: 'n', label: 'N', type: 'number' }], rows: [{ n: round_ }] } },
              ],
            },
          },
          { reply: { content: [{ type: 'text', text: `Run ${round_} done.` }] } },
        ],
      });
      await send(page, `run ${round_}`);
      await page.locator('[data-role=assistant]').filter({ hasText: `Run ${round_} done.` }).waitFor({ timeout: 300_000 });
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached' });
    };
    for (let round_ = 1; round_ <= ROUNDS; round_++) {
      await mission(round_);
      const before = await timeline(page).getByRole('listitem').count();
      const started = Date.now();
      await timeline(page).getByRole('button', { name: 'Checkpoint now' }).click();
      await page.waitForFunction((count) => document.querySelectorAll('[aria-label="Timeline window: Timeline"] [role=listitem], [aria-label="Timeline window: Timeline"] li').length > count, before, { timeout: 120_000 });
      takes.push(Date.now() - started);
      sizes.push((await newestRecord(page)).added_bytes / 1e6);
    }
    // Missions back to back: each one's checkpoint, before its first change, keeps what the one
    // before it did. The mission waits until the checkpoint holds the stack, not until it is stored.
    for (let round_ = ROUNDS + 1; round_ <= 2 * ROUNDS + 1; round_++) {
      const from = logged.length;
      await mission(round_);
      if (round_ === ROUNDS + 1) continue; // the first follows a "Checkpoint now"
      const deadline = Date.now() + 120_000;
      let line: string | undefined;
      while (!(line = logged.slice(from).find((text) => /^checkpoint \S+ taken in .* held \d+/.test(text))) && Date.now() < deadline) await page.waitForTimeout(200);
      if (!line) throw new Error('no checkpoint held the stack before the mission');
      holds.push(Number(/held (\d+)/.exec(line)![1]));
    }
    const record = await newestRecord(page);
    report(summarise('checkpoint.take_ms', 'ms', takes, { goal: 1000, after: 'a mission: Python wrote a 1.2 MB CSV, a note, a table; computer running' }));
    report(summarise('checkpoint.hold_ms', 'ms', holds, { goal: 1000, after: 'the same mission, back to back: how long the next one waits for its checkpoint before changing anything' }));
    report(summarise('checkpoint.size_mb', 'MB', sizes, { goal: 10, stack_mb: round(record.total_bytes / 1e6) }));

    // Restore the checkpoint taken after the second mission (its computer wakes from its state).
    const manual = timeline(page).getByRole('listitem').filter({ has: page.locator('.task-title', { hasText: /^Checkpoint now$/ }) });
    await manual.nth(1).getByRole('button', { name: 'Restore…' }).click();
    const started = Date.now();
    await timeline(page).getByRole('button', { name: 'Restore', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('stack') === 'default', { timeout: 300_000 }).catch(() => {});
    await page.waitForLoadState('load');
    await chatReady(page);
    const restoreMs = Date.now() - started;
    await page.getByRole('status', { name: 'Computer' }).filter({ hasText: /ready/i }).waitFor({ timeout: 300_000 }).catch(() => {});
    const toShell = Date.now() - started;
    report({ bench: 'checkpoint.restore_ms', value: restoreMs, unit: 'ms', n: 1, p50: restoreMs, p95: restoreMs, to_shell_ms: toShell, stack_mb: round(record.total_bytes / 1e6) });
  } finally {
    await browser.close();
    await stack.close();
    await fake.close();
  }
}
