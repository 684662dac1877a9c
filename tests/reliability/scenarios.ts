// The reliability scenarios, each a function of where the app and the scripted model are and how
// many runs to make. `npm run reliability` runs them in full and writes docs/reliability.md; the
// e2e suite runs each a few times (tests/e2e/reliability.spec.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { makeHostileCorpus, type HostileFile } from '../fixtures/hostile.ts';
import { createRandom } from '../fixtures/invoices.ts';
import { fixture } from '../support/fixtures.ts';
import { browserPids, checkStackDatabases, kill, killNow, launch, newProfile, newResult, openApp, readStackFiles, type Browser, type ScenarioResult } from './harness.ts';

export interface Target {
  /** The production build's origin. */
  appUrl: string;
  /** The scripted model's admin origin. */
  fakeUrl: string;
}

/** The busy work a kill interrupts. */
export type Activity = 'chat' | 'upload' | 'settings';

async function loadBurstScript(fakeUrl: string): Promise<void> {
  const script = {
    name: 'reliability burst',
    turns: [{ reply: { content: [{ type: 'text', text: 'Noted. This answer streams in small pieces, so a kill can land in the middle of it.' }], chunk_chars: 6, delay_ms: 15 }, repeat: -1 }],
  };
  const response = await fetch(`${fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify(script) });
  if (!response.ok) throw new Error(`the scripted model refused the burst script: ${await response.text()}`);
}

/** What the page has acknowledged so far: messages shown in the chat, uploads it said were added, the settings it saved. */
interface Acknowledged {
  messages: string[];
  uploads: { name: string; bytes: Buffer }[];
  model: string | null;
  /** Models saved after the acknowledged one, whose answer the kill cut off: any may be stored. */
  laterModels: string[];
}

/** The chat's user messages that match `pattern` (a queued one also reads "· queued"). */
async function shownMessages(page: Page, pattern: RegExp): Promise<string[]> {
  return (await page.locator('[data-role=user]').allTextContents()).flatMap((text) => text.match(pattern)?.[0] ?? []);
}

/** Does `activity` until `stopAt` (a performance.now() time), recording what the page acknowledged. */
async function work(page: Page, activity: Activity, run: number, stopAt: number, ack: Acknowledged): Promise<void> {
  const pdf = fixture('plain-1.pdf');
  let i = 0;
  while (performance.now() < stopAt) {
    i++;
    if (activity === 'chat') {
      const text = `burst ${run}.${i}`;
      await page.getByRole('textbox', { name: 'Message' }).fill(text);
      await page.getByRole('textbox', { name: 'Message' }).press('Enter');
      await page.waitForTimeout(60);
      ack.messages = await shownMessages(page, /burst \d+\.\d+/);
    } else if (activity === 'upload') {
      const name = `kill-${run}-${i}.pdf`;
      await page.getByLabel('Attach files').setInputFiles([{ name, mimeType: 'application/pdf', buffer: pdf }]);
      const added = page.locator('[data-role=notice]').filter({ hasText: `Added ${name}` });
      await added.waitFor({ timeout: Math.max(1, stopAt - performance.now()) }).then(
        () => ack.uploads.push({ name, bytes: pdf }),
        () => {},
      );
    } else {
      const model = `reliability-model-${run}-${i}`;
      ack.laterModels.push(model);
      await page.getByRole('button', { name: 'Settings' }).click();
      await page.getByRole('textbox', { name: 'Model', exact: true }).fill(model);
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('dialog').waitFor({ state: 'hidden', timeout: Math.max(1, stopAt - performance.now()) }).then(
        () => {
          ack.model = model;
          ack.laterModels = [];
        },
        () => {},
      );
    }
  }
}

/**
 * SIGKILL the browser at a random moment of `activity`, `runs` times, on one persistent profile.
 * After each kill: the stack opens, both databases pass `PRAGMA integrity_check`, and everything
 * acknowledged before the kill is there.
 */
export async function killDuring(target: Target, activity: Activity, runs: number, seed: number): Promise<ScenarioResult> {
  const result = newResult(`kill during ${activity === 'chat' ? 'a burst of chat turns' : activity === 'upload' ? 'uploads being read' : 'settings changes'}`);
  const random = createRandom(seed);
  const profile = newProfile();
  // Chat kills land the instant the page shows the N-th new message (reported by a binding), so
  // a message shown before it was stored would be caught lost.
  let seen: string[] = [];
  let killAt = Infinity;
  let pids: number[] = [];
  const start = async (): Promise<Browser> => {
    const opened = await launch(profile, target.appUrl);
    await opened.context.exposeBinding('__shown', (_source, text: string) => {
      seen.push(text);
      if (seen.length >= killAt) killNow(pids);
    });
    await opened.context.addInitScript(() => {
      const report = (node: Node) => {
        if (!(node instanceof HTMLElement)) return;
        for (const el of [node, ...node.querySelectorAll('[data-role=user]')]) {
          const text = el.getAttribute('data-role') === 'user' ? /burst \d+\.\d+/.exec(el.textContent ?? '')?.[0] : undefined;
          if (text) void (window as unknown as { __shown(text: string): Promise<void> }).__shown(text);
        }
      };
      new MutationObserver((changes) => changes.forEach((change) => change.addedNodes.forEach(report))).observe(document, { childList: true, subtree: true });
    });
    pids = browserPids(profile);
    return opened;
  };
  let browser: Browser = await start();
  const everything: Acknowledged = { messages: [], uploads: [], model: null, laterModels: [] };
  try {
    await openApp(browser.page);
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const problems: string[] = [];
      await loadBurstScript(target.fakeUrl);
      const ack: Acknowledged = { messages: [], uploads: [], model: null, laterModels: [] };
      const stopAt = performance.now() + 400 + random() * 3600;
      seen = [];
      killAt = activity === 'chat' ? 1 + Math.floor(random() * 25) : Infinity;
      await work(browser.page, activity, run, stopAt, ack).catch(() => {});
      await kill(browser);
      if (activity === 'chat') ack.messages = [...new Set([...ack.messages, ...seen])];
      everything.messages = [...new Set([...everything.messages, ...ack.messages])];
      everything.uploads.push(...ack.uploads);
      if (ack.model) everything.model = ack.model;
      everything.laterModels = ack.model ? ack.laterModels : [...everything.laterModels, ...ack.laterModels];

      killAt = Infinity;
      browser = await start();
      let reopened = 0;
      try {
        reopened = await openApp(browser.page);
        result.slowestMs = Math.max(result.slowestMs, reopened);
      } catch (error) {
        result.corrupt++;
        problems.push(`the stack did not open: ${(error as Error).message.split('\n')[0]}`);
      }
      const db = await checkStackDatabases(browser.page, 'default', "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued';");
      if (db.transcript !== 'ok' || db.memory !== 'ok') {
        result.corrupt++;
        problems.push(`integrity_check: transcript ${db.transcript}, memory ${db.memory}`);
      }
      const stored = new Set(db.rows);
      const lostMessages = everything.messages.filter((text) => !stored.has(text));
      const files = await readStackFiles(browser.page, 'default', [...everything.uploads.map((upload) => `documents/${upload.name}`), '.os/config/settings.json']);
      const lostUploads = everything.uploads.filter((upload) => !files.get(`documents/${upload.name}`)?.equals(upload.bytes));
      const settings = files.get('.os/config/settings.json');
      const storedModel = settings ? (JSON.parse(settings.toString('utf8')) as { model?: string }).model : undefined;
      const lostModel = everything.model !== null && storedModel !== everything.model && !everything.laterModels.includes(storedModel ?? '');
      if (storedModel) {
        // What is stored now is what the next run builds on.
        everything.model = storedModel;
        everything.laterModels = [];
      }
      const lost = lostMessages.length + lostUploads.length + (lostModel ? 1 : 0);
      if (lost) problems.push(`lost: ${[...lostMessages, ...lostUploads.map((upload) => upload.name), ...(lostModel ? [`model ${everything.model}`] : [])].join(', ')}`);
      result.lost += lost;
      if (problems.length) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
      }
      await openApp(browser.page).catch(() => {});
    }
    result.notes.unshift(`acknowledged before the kills: ${new Set(everything.messages).size} messages, ${everything.uploads.length} uploads, ${everything.model ? 'a settings change' : 'no settings change'}; reopen ${Math.round(result.slowestMs)} ms at the slowest`);
  } finally {
    await browser.context.close().catch(() => {});
  }
  return result;
}

/**
 * Two tabs on one stack, `runs` take-overs: at any moment exactly one owns the stack (the other
 * says so), each sends a message and uploads a file while it owns it, and nothing acknowledged
 * by either is lost.
 */
export async function twoTabs(target: Target, runs: number): Promise<ScenarioResult> {
  const result = newResult('two tabs taking a stack over from each other');
  const profile = newProfile();
  const browser = await launch(profile, target.appUrl);
  const second = await browser.context.newPage();
  const tabs = [browser.page, second];
  const acknowledged: string[] = [];
  const uploads: string[] = [];
  try {
    await loadBurstScript(target.fakeUrl);
    await openApp(tabs[0]!);
    await tabs[1]!.goto('/');
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const [owner, other] = run % 2 ? [tabs[1]!, tabs[0]!] : [tabs[0]!, tabs[1]!];
      const problems: string[] = [];
      const started = performance.now();
      await owner.getByRole('button', { name: /take over|use it here/i }).click({ timeout: 15_000 }).catch((error) => problems.push(`no take-over offered: ${(error as Error).message.split('\n')[0]}`));
      await owner.getByRole('textbox', { name: 'Message' }).waitFor({ timeout: 30_000 }).catch(() => {});
      await owner.waitForFunction(() => !(document.querySelector('[aria-label="Message"]') as HTMLTextAreaElement | null)?.disabled, null, { timeout: 30_000 }).catch(() => problems.push('the new owner never became ready'));
      result.slowestMs = Math.max(result.slowestMs, performance.now() - started);
      // The tab that lost the stack says so and offers it back.
      await other.getByRole('button', { name: /take over|use it here/i }).waitFor({ timeout: 15_000 }).catch(() => problems.push('the other tab does not say the stack is open elsewhere'));
      const text = `tab message ${run}`;
      await owner.getByRole('textbox', { name: 'Message' }).fill(text);
      await owner.getByRole('textbox', { name: 'Message' }).press('Enter');
      await owner.locator('[data-role=user]').filter({ hasText: text }).waitFor({ timeout: 15_000 }).then(() => acknowledged.push(text), () => problems.push(`"${text}" was not shown`));
      if (run % 5 === 0) {
        const name = `tab-upload-${run}.pdf`;
        await owner.getByLabel('Attach files').setInputFiles([{ name, mimeType: 'application/pdf', buffer: fixture('plain-2.pdf') }]);
        await owner.locator('[data-role=notice]').filter({ hasText: `Added ${name}` }).waitFor({ timeout: 15_000 }).then(() => uploads.push(name), () => problems.push(`${name} was not added`));
      }
      if (problems.length) {
        result.failures++;
        result.notes.push(`take-over ${run}: ${problems.join('; ')}`);
      }
    }
    // Everything either tab acknowledged is in the stack.
    await second.close();
    const db = await checkStackDatabases(browser.page, 'default', "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued';");
    if (db.transcript !== 'ok' || db.memory !== 'ok') result.corrupt++;
    const stored = new Set(db.rows);
    const files = await readStackFiles(browser.page, 'default', uploads.map((name) => `documents/${name}`));
    const lost = [...acknowledged.filter((text) => !stored.has(text)), ...uploads.filter((name) => !files.get(`documents/${name}`))];
    result.lost += lost.length;
    if (lost.length) result.notes.push(`lost: ${lost.join(', ')}`);
    result.notes.unshift(`${acknowledged.length} messages and ${uploads.length} uploads acknowledged across ${runs} take-overs; slowest take-over ${Math.round(result.slowestMs)} ms`);
  } finally {
    await browser.context.close().catch(() => {});
  }
  return result;
}

/** Every Chromium process of the profile's resident memory, in MB (Linux /proc). */
function residentMb(pids: number[]): number {
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

/**
 * The hostile-upload corpus (tests/fixtures/hostile.ts) dropped into the app in batches, while
 * the user keeps typing: every refusal names its file, every accepted file ends read or named
 * unreadable, the page never crashes, an input answers in under 100 ms throughout (the Event
 * Timing API's durations), and a document uploaded before is untouched.
 */
export async function hostileUploads(target: Target, seed = 7, pick: (files: HostileFile[]) => HostileFile[] = (files) => files): Promise<ScenarioResult> {
  const result = newResult('hostile uploads (zip and image bombs, 3,000 pages, programs as documents, odd names, 25 MB + 1)');
  const corpus = pick(await makeHostileCorpus(seed, { pdf: new Uint8Array(fixture('plain-1.pdf')), jpg: new Uint8Array(fixture('plain-1_scan.jpg')) }));
  const profile = newProfile();
  const scratch = mkdtempSync(join(tmpdir(), 'stackdocs-hostile-'));
  const browser = await launch(profile, target.appUrl);
  const { page } = browser;
  let crashed = false;
  page.on('crash', () => (crashed = true));
  await browser.context.addInitScript(() => {
    const slow: { name: string; duration: number }[] = [];
    (window as unknown as { __slowInputs: typeof slow }).__slowInputs = slow;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (['keydown', 'keypress', 'keyup', 'input', 'pointerdown', 'click'].includes(entry.name)) slow.push({ name: entry.name, duration: entry.duration });
    }).observe({ type: 'event', durationThreshold: 16, buffered: true } as PerformanceObserverInit);
  });
  const pids = () => browserPids(profile);
  let peakMb = 0;
  const sampler = setInterval(() => (peakMb = Math.max(peakMb, residentMb(pids()))), 500);
  try {
    await loadBurstScript(target.fakeUrl);
    await openApp(page);
    const kept = fixture('plain-2.pdf');
    await page.getByLabel('Attach files').setInputFiles([{ name: 'kept.pdf', mimeType: 'application/pdf', buffer: kept }]);
    await page.locator('[data-role=notice]').filter({ hasText: 'Read kept.pdf' }).waitFor({ timeout: 60_000 });

    const refusals: string[] = [];
    const typing = async () => {
      const box = page.getByRole('textbox', { name: 'Message' });
      await box.click();
      await page.keyboard.type('still here', { delay: 20 });
      await box.fill('');
    };
    // Small files as buffers (their names are the attack), large ones from disk (Playwright sends
    // buffers only up to 50 MB in all), each kind in batches of its own.
    const small = corpus.filter((file) => file.bytes.length < 10 * 1024 * 1024);
    const large = corpus.filter((file) => file.bytes.length >= 10 * 1024 * 1024);
    const batches: Parameters<Page['setInputFiles']>[1][] = [];
    for (let at = 0; at < small.length; at += 10) {
      batches.push(small.slice(at, at + 10).map((file) => ({ name: file.name, mimeType: 'application/octet-stream', buffer: Buffer.from(file.bytes) })));
    }
    for (const file of large) {
      const path = join(scratch, file.name.replace(/[^\w.-]/g, '_'));
      writeFileSync(path, file.bytes);
      batches.push([path]);
    }
    for (const batch of batches) {
      await page.getByLabel('Attach files').setInputFiles(batch);
      await typing();
      // The batch is done when the composer is no longer sending files.
      await page.waitForFunction(() => !document.querySelector('.chat-uploading'), null, { timeout: 120_000 }).catch(() => {});
      await page.waitForTimeout(300);
      refusals.push(...(await page.locator('.chat-send-error[role=alert]').allTextContents()));
    }
    // Keep typing until every accepted file is read or named unreadable.
    const added = async () => page.locator('[data-role=notice]').filter({ hasText: /^Added / }).count();
    const settled = async () => (await page.locator('[data-role=notice]').filter({ hasText: /^Read / }).count()) + (await page.locator('[data-role=error][data-code=document_failed]').count());
    const deadline = performance.now() + 600_000;
    while (performance.now() < deadline && (await settled()) < (await added())) await typing();
    const accepted = await added();
    const read = await page.locator('[data-role=notice]').filter({ hasText: /^Read / }).count();
    const unreadable = await page.locator('[data-role=error][data-code=document_failed]').count();
    if (read + unreadable < accepted) {
      result.failures += accepted - read - unreadable;
      result.notes.push(`${accepted - read - unreadable} stored files were never read nor named unreadable`);
    }
    // Each "cannot be read" names the file and a reason a person can act on.
    const vague = (await page.locator('[data-role=error][data-code=document_failed]').allTextContents()).filter((text) => /\((undefined|null|)\)\.?\s*$/.test(text.trim()));
    if (vague.length) {
      result.failures += vague.length;
      result.notes.push(`messages without a reason: ${vague.join(' | ')}`);
    }
    const slow = await page.evaluate(() => (window as unknown as { __slowInputs: { name: string; duration: number }[] }).__slowInputs);
    const slowest = slow.reduce((max, entry) => Math.max(max, entry.duration), 0);
    result.slowestMs = slowest;
    result.runs = corpus.length;
    const expectedRefusals = corpus.filter((file) => file.outcome === 'refused').length;
    if (refusals.length < expectedRefusals) {
      result.failures += expectedRefusals - refusals.length;
      result.notes.push(`${refusals.length} refusals shown for ${expectedRefusals} files that must be refused`);
    }
    if (slowest >= 100) {
      result.failures++;
      result.notes.push(`an input took ${Math.round(slowest)} ms to answer (${slow.filter((entry) => entry.duration >= 100).length} of ${slow.length} over 100 ms)`);
    }
    if (crashed) result.corrupt++;
    const files = await readStackFiles(page, 'default', ['documents/kept.pdf']);
    if (!files.get('documents/kept.pdf')?.equals(kept)) {
      result.lost++;
      result.notes.push('kept.pdf changed or vanished');
    }
    const db = await checkStackDatabases(page, 'default', 'SELECT 1;');
    if (db.transcript !== 'ok' || db.memory !== 'ok') result.corrupt++;
    result.notes.unshift(
      `${corpus.length} files: ${refusals.length} refused, each naming its file; ${accepted - 1} stored, of which ${read - 1} read and ${unreadable} named unreadable (besides kept.pdf, uploaded first and untouched); ${await openApp(page).then(() => 'the stack reopens')}; slowest input ${Math.round(slowest)} ms; Chromium's processes peaked at ${peakMb} MB resident (summed RSS)`,
    );
  } finally {
    clearInterval(sampler);
    await browser.context.close().catch(() => {});
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}
