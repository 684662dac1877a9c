// The reliability scenario of a checkpoint restore killed part-way: a stack with tens of megabytes
// of files, a note and a conversation goes back to a checkpoint through the Timeline, and the
// browser is SIGKILLed at a random moment of it. After each kill the stack must open, check clean,
// and be exactly the stack before the restore or exactly the checkpoint — never a mix.
import type { Page } from 'playwright-core';
import { createRandom } from '../fixtures/invoices.ts';
import { fixture } from '../support/fixtures.ts';
import { browserPids, checkStackDatabases, disposeProfile, kill, killNow, launch, newProfile, newResult, openApp, type Browser, type ScenarioResult } from './harness.ts';
import type { Target } from './scenarios.ts';

/** A stack's user files (everything outside `.os/`): path -> `size:sha256`. */
type Files = Map<string, string>;

/** What a stack holds that a restore replaces: its files and its conversation. */
interface StackState {
  files: Files;
  messages: string[];
}

/** How far a restore had gone when the kill came, as the page saw it in OPFS. */
type Phase = 'not started' | 'before kept' | 'replacing' | 'restored' | 'reopened';

const MESSAGES_SQL = "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued' ORDER BY seq;";
const TIMELINE = 'Timeline window: Timeline';

/** tsx names the functions declared in the code sent to the page with a `__name` helper the page lacks. */
const allowNames = (page: Page) => page.evaluate('globalThis.__name ??= (f) => f');

/** The stack's user files, read and hashed in a page of the app's origin that runs no worker. */
async function userFiles(page: Page, stack: string): Promise<Files> {
  await page.goto('/manifest.webmanifest');
  await allowNames(page);
  const found = await page.evaluate(async (stack) => {
    const out: [string, string][] = [];
    const walk = async (dir: FileSystemDirectoryHandle, prefix: string): Promise<void> => {
      for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
        const path = prefix ? `${prefix}/${name}` : name;
        if (path === '.os') continue;
        if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle, path);
        else {
          const bytes = await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer();
          const digest = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
          out.push([path, `${bytes.byteLength}:${digest}`]);
        }
      }
    };
    await walk(await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle(stack), '');
    return out;
  }, stack);
  return new Map(found.sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The stack as it lies in OPFS: its files, and its databases checked with Debian's sqlite3. */
async function readState(page: Page): Promise<StackState & { integrity: string }> {
  const files = await userFiles(page, 'default');
  const db = await checkStackDatabases(page, 'default', MESSAGES_SQL);
  return { files, messages: db.rows, integrity: db.transcript === 'ok' && db.memory === 'ok' ? 'ok' : `transcript ${db.transcript}, memory ${db.memory}` };
}

/** Files of `expected` missing or different in `found`, and files in `found` that `expected` lacks. */
function difference(expected: Files, found: Files): { missing: string[]; extra: string[] } {
  return {
    missing: [...expected].filter(([path, hash]) => found.get(path) !== hash).map(([path]) => path),
    extra: [...found.keys()].filter((path) => !expected.has(path)),
  };
}

const same = (a: StackState, b: StackState) => {
  const files = difference(a.files, b.files);
  return files.missing.length === 0 && files.extra.length === 0 && a.messages.join('\n') === b.messages.join('\n');
};

async function loadScript(fakeUrl: string, name: string, turns: unknown[]): Promise<void> {
  const response = await fetch(`${fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify({ name, turns }) });
  if (!response.ok) throw new Error(`the scripted model refused the script "${name}": ${await response.text()}`);
}

const bash = (command: string) => ({ type: 'tool_use', name: 'bash', input: { command, timeout: 600 } });

/** Sends a message and waits for the scripted model's last words. */
async function say(page: Page, text: string, answer: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('[data-role=assistant]').filter({ hasText: answer }).last().waitFor({ timeout: 300_000 });
}

async function openTimeline(page: Page): Promise<void> {
  const timeline = page.getByRole('region', { name: TIMELINE });
  if (!(await timeline.isVisible())) {
    await page.getByRole('button', { name: 'Add a window' }).click();
    await page.getByRole('menuitem', { name: 'Timeline' }).click();
  }
  await timeline.waitFor({ timeout: 30_000 });
}

/** The stack made once: documents, tens of megabytes written by its computer, a note, a conversation; then a checkpoint. */
async function setUp(page: Page, fakeUrl: string): Promise<void> {
  await page.getByLabel('Attach files').setInputFiles([
    { name: 'plain-1.pdf', mimeType: 'application/pdf', buffer: fixture('plain-1.pdf') },
    { name: 'plain-2.pdf', mimeType: 'application/pdf', buffer: fixture('plain-2.pdf') },
  ]);
  for (const name of ['plain-1.pdf', 'plain-2.pdf']) await page.locator('[data-role=notice]').filter({ hasText: `Read ${name}` }).waitFor({ timeout: 120_000 });
  await loadScript(fakeUrl, 'restore: set up', [
    {
      reply: {
        content: [
          bash('mkdir -p /workspace/data && head -c 16000000 /dev/urandom > /workspace/data/archive.bin && head -c 8000000 /dev/urandom > /workspace/data/ledger.bin && head -c 6000000 /dev/urandom > /workspace/data/photos.bin && sync && echo SETUP-$((6*7))'),
          { type: 'tool_use', name: 'write', input: { path: 'notes/plan.md', content: '# Plan\n\nKeep the archive, the ledger and the photos.\n' } },
        ],
      },
    },
    { expect: { tool_result: { contains: 'SETUP-42' } }, reply: { content: [{ type: 'text', text: 'Set up the stack.' }] } },
  ]);
  await say(page, 'Please set up the stack', 'Set up the stack.');
  await openTimeline(page);
  const timeline = page.getByRole('region', { name: TIMELINE });
  await timeline.getByRole('button', { name: 'Checkpoint now' }).click();
  await checkpointRow(page).waitFor({ timeout: 300_000 });
}

/** The Timeline's row of the checkpoint the user took ("Checkpoint now"). */
const checkpointRow = (page: Page) => page.getByRole('region', { name: TIMELINE }).getByRole('listitem').filter({ has: page.locator('.task-title', { hasText: /^Checkpoint now$/ }) });

/** A mission that changes the stack: a document deleted, a file and the note changed, a file added. */
async function change(page: Page, fakeUrl: string, run: number): Promise<void> {
  await loadScript(fakeUrl, `restore: change ${run}`, [
    {
      reply: {
        content: [
          bash(`rm -f /workspace/documents/plain-2.pdf && head -c 5000000 /dev/urandom > /workspace/data/ledger.bin && echo "run ${run}" >> /workspace/notes/plan.md && head -c 3000000 /dev/urandom > /workspace/data/added-${run}.bin && sync && echo CHANGED-$((6*7))`),
        ],
      },
    },
    { expect: { tool_result: { contains: 'CHANGED-42' } }, reply: { content: [{ type: 'text', text: `Changed the stack, run ${run}.` }] } },
  ]);
  await say(page, `Please change the stack, run ${run}`, `Changed the stack, run ${run}.`);
  // The checkpoint the mission took goes again, as a user tidying the timeline would: the keep
  // rule (the newest 20) would otherwise drop the one restored after ten runs.
  await openTimeline(page);
  const taken = page.getByRole('region', { name: TIMELINE }).getByRole('listitem').filter({ hasText: `Please change the stack, run ${run}` });
  await taken.waitFor({ timeout: 120_000 });
  await taken.getByRole('button', { name: 'Delete' }).click();
  await taken.waitFor({ state: 'detached', timeout: 60_000 });
}

/**
 * Clicks Restore on the checkpoint and watches OPFS from the page (every 20 ms) for how far the
 * restore has gone: `onPhase` hears each step. Resolves once the restore was asked for.
 */
async function startRestore(page: Page, before: Files, checkpoint: Files): Promise<void> {
  await openTimeline(page);
  await checkpointRow(page).getByRole('button', { name: 'Restore…' }).click();
  await allowNames(page);
  await page.evaluate(
    ({ before, checkpoint }) => {
      const report = (window as unknown as { __restorePhase(phase: string): Promise<void> }).__restorePhase;
      const sizes = async () => {
        const out: Record<string, number> = {};
        let records = 0;
        const walk = async (dir: FileSystemDirectoryHandle, prefix: string): Promise<void> => {
          for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
            const path = prefix ? `${prefix}/${name}` : name;
            if (path === '.os') {
              const kept = await (handle as FileSystemDirectoryHandle).getDirectoryHandle('checkpoints').catch(() => null);
              if (kept) for await (const [entry] of (kept as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) if (entry.endsWith('.json')) records++;
              continue;
            }
            if (handle.kind === 'directory') await walk(handle as FileSystemDirectoryHandle, path);
            else out[path] = (await (handle as FileSystemFileHandle).getFile()).size;
          }
        };
        await walk(await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle('default'), '');
        return { out, records };
      };
      const matches = (found: Record<string, number>, expected: Record<string, number>) =>
        Object.keys(found).length === Object.keys(expected).length && Object.entries(expected).every(([path, size]) => found[path] === size);
      let firstRecords = -1;
      let first: Record<string, number> | null = null;
      let last = '';
      const tick = async () => {
        const { out, records } = await sizes().catch(() => ({ out: null, records: 0 }));
        if (!out) return;
        if (firstRecords < 0) firstRecords = records;
        // As the page found the stack when the restore was asked for (also what `before` says, unless something moved since).
        first ??= matches(out, before) ? before : out;
        const phase = matches(out, first) ? (records > firstRecords ? 'before kept' : 'not started') : matches(out, checkpoint) ? 'restored' : 'replacing';
        if (phase !== last) void report((last = phase));
      };
      const loop = async () => {
        for (;;) {
          await tick();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      void loop();
    },
    { before: sizesOf(before), checkpoint: sizesOf(checkpoint) },
  );
  await page.getByRole('region', { name: TIMELINE }).getByRole('button', { name: 'Restore', exact: true }).click();
}

const sizesOf = (files: Files) => Object.fromEntries([...files].map(([path, hash]) => [path, Number(hash.split(':')[0])]));

/**
 * SIGKILL the browser at a random moment of a checkpoint restore, `runs` times, on one persistent
 * profile. The moments are spread over the restore's duration, measured first by one restore
 * left to finish. After each kill: the stack opens, both databases pass `PRAGMA integrity_check`,
 * and its files (names and bytes) and conversation are exactly the stack's before the restore or
 * exactly the checkpoint's; anything else is counted corrupt, and the files it lacks lost.
 */
export async function killDuringRestore(target: Target, runs: number, seed: number): Promise<ScenarioResult> {
  const result = newResult('kill during a checkpoint restore');
  const random = createRandom(seed);
  const profile = newProfile();
  let phase: Phase = 'not started';
  const phaseAt = new Map<Phase, number>();
  /** Called when the page first sees the stack's files being replaced (armed by a run that kills then). */
  let onReplacing: (() => void) | null = null;
  const phases = new Map<Phase, number>();
  const start = async (): Promise<Browser> => {
    const opened = await launch(profile, target.appUrl);
    // The Timeline asks before it deletes a checkpoint.
    opened.page.on('dialog', (dialog) => void dialog.accept());
    await opened.context.exposeBinding('__restorePhase', (_source, seen: Phase) => {
      phase = seen;
      if (!phaseAt.has(seen)) phaseAt.set(seen, performance.now());
      if (seen === 'replacing') onReplacing?.();
    });
    return opened;
  };
  let browser = await start();
  try {
    await openApp(browser.page);
    await setUp(browser.page, target.fakeUrl);
    const checkpoint = await readState(browser.page);
    if (checkpoint.integrity !== 'ok') throw new Error(`the stack's databases did not check clean after the set-up: ${checkpoint.integrity}`);
    const megabytes = [...checkpoint.files.values()].reduce((sum, hash) => sum + Number(hash.split(':')[0]), 0) / 1e6;

    // One restore left to finish: how long a restore takes here, from the click to the page opening the stack again.
    await openApp(browser.page);
    await change(browser.page, target.fakeUrl, 0);
    let before = await readState(browser.page);
    await openApp(browser.page);
    const reloaded = browser.page.waitForEvent('load', { timeout: 300_000 });
    phaseAt.clear();
    const clicked = performance.now();
    await startRestore(browser.page, before.files, checkpoint.files);
    await reloaded;
    const restoreMs = performance.now() - clicked;
    // The files' own replacing: from the first file gone to the checkpoint's all there.
    const replacingAt = (phaseAt.get('replacing') ?? clicked) - clicked;
    const replaceMs = Math.max(200, (phaseAt.get('restored') ?? performance.now()) - clicked - replacingAt);
    await openApp(browser.page);
    const calibrated = await readState(browser.page);
    if (!same(calibrated, checkpoint)) throw new Error(`a restore left to finish did not bring the checkpoint back: ${JSON.stringify(difference(checkpoint.files, calibrated.files))}`);
    result.notes.push(`the stack: ${checkpoint.files.size} files, ${megabytes.toFixed(1)} MB outside .os/, ${checkpoint.messages.length} message(s); a restore took ${Math.round(restoreMs)} ms from the click to the page opening the stack again, its files replaced from ${Math.round(replacingAt)} ms for ${Math.round(replaceMs)} ms (the stack closed and kept as a checkpoint before)`);
    await openApp(browser.page);

    for (let run = 1; run <= runs; run++) {
      result.runs++;
      try {
        await killOnce(run);
      } catch (error) {
        // A stack a kill left broken may not take the next change: said, and the next run goes on.
        result.failures++;
        result.notes.push(`run ${run}: stopped: ${(error as Error).message.split('\n')[0]}`);
        await kill(browser);
        browser = await start();
        await openApp(browser.page).catch(() => {});
      }
    }
    async function killOnce(run: number): Promise<void> {
      const problems: string[] = [];
      await change(browser.page, target.fakeUrl, run);
      before = await readState(browser.page);
      await openApp(browser.page);
      phase = 'not started';
      phaseAt.clear();
      // Three kills in four land while the files are replaced (a moment after the page sees the
      // first one go, spread over how long that took and a little past it); the others anywhere
      // from the click to a little past the page opening the stack again.
      const whileReplacing = random() < 0.75;
      const delay = whileReplacing ? random() * replaceMs * 1.2 : random() * restoreMs * 1.15;
      let killed!: () => void;
      const done = new Promise<void>((resolve) => (killed = resolve));
      const killAt = () => setTimeout(() => (killNow(browserPids(profile)), killed()), delay);
      let pageReloaded = false;
      browser.page.once('load', () => (pageReloaded = true));
      const clickedAt = performance.now();
      const asked = await startRestore(browser.page, before.files, checkpoint.files).then(
        () => true,
        (error: Error) => (result.notes.push(`run ${run}: the restore was not asked for: ${error.message.split('\n')[0]}`), false),
      );
      if (asked && whileReplacing) {
        onReplacing = () => ((onReplacing = null), killAt());
        if ((phase as Phase) === 'replacing') onReplacing();
      } else killAt();
      // Never seen replacing (too quick for the page to see): killed when the restore would be over.
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, restoreMs * 1.5))]);
      onReplacing = null;
      killNow(browserPids(profile));
      const killAfter = performance.now() - clickedAt;
      const at: Phase = pageReloaded ? 'reopened' : phase;
      phases.set(at, (phases.get(at) ?? 0) + 1);
      await kill(browser);

      browser = await start();
      try {
        result.slowestMs = Math.max(result.slowestMs, await openApp(browser.page));
      } catch (error) {
        result.corrupt++;
        problems.push(`the stack did not open: ${(error as Error).message.split('\n')[0]}`);
      }
      const after = await readState(browser.page);
      if (after.integrity !== 'ok') {
        result.corrupt++;
        problems.push(`integrity_check: ${after.integrity}`);
      }
      const asBefore = same(after, before);
      const asCheckpoint = same(after, checkpoint);
      if (!asBefore && !asCheckpoint) {
        const fromBefore = difference(before.files, after.files);
        const fromCheckpoint = difference(checkpoint.files, after.files);
        const nearest = fromBefore.missing.length + fromBefore.extra.length <= fromCheckpoint.missing.length + fromCheckpoint.extra.length ? { ...fromBefore, as: 'before the restore' } : { ...fromCheckpoint, as: 'the checkpoint' };
        result.corrupt++;
        result.lost += nearest.missing.length;
        problems.push(
          `a mix: nearest ${nearest.as}, missing or different ${nearest.missing.join(', ') || 'none'}, extra ${nearest.extra.join(', ') || 'none'}; messages ${after.messages.length} (before ${before.messages.length}, checkpoint ${checkpoint.messages.length})`,
        );
      }
      result.notes.push(`run ${run}: killed ${Math.round(killAfter)} ms after the click${whileReplacing ? ` (${Math.round(delay)} ms after the files began to go)` : ''}, ${at}: ${asCheckpoint ? 'the checkpoint' : asBefore ? 'as before the restore' : 'NEITHER'}${problems.length ? `; ${problems.join('; ')}` : ''}`);
      if (problems.length) result.failures++;
      await openApp(browser.page).catch(() => {});
    }
    const mid = phases.get('replacing') ?? 0;
    result.notes.splice(1, 0, `${mid} of ${runs} kills landed mid-restore (the stack's files neither as before nor as the checkpoint); by how far the restore had gone: ${[...phases].map(([seen, count]) => `${seen} ${count}`).join(', ')}; slowest reopen ${Math.round(result.slowestMs)} ms`);
  } finally {
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
  }
  return result;
}
