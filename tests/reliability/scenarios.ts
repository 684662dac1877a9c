// The reliability scenarios, each a function of where the app and the scripted model are and how
// many runs to make. `npm run reliability` runs them in full and writes docs/reliability.md; the
// e2e suite runs each a few times (tests/e2e/reliability.spec.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import type { CDPSession, Page } from 'playwright-core';
import { makeHostileCorpus, type HostileFile } from '../fixtures/hostile.ts';
import { COLLECTOR_HOST, poisonedDocuments, type Attack, type PoisonedDocument } from '../fixtures/poisoned.ts';
import { createRandom } from '../fixtures/invoices.ts';
import { fixture } from '../support/fixtures.ts';
import { inputTimingProblems, inputTimingSummary, readInputTiming, recordInputTiming, TIMED_INPUTS } from '../support/input-timing.ts';
import { browserPids, checkDiskImage, checkStackDatabases, diskImageIn, disposeProfile, kill, killNow, launch, newProfile, newResult, openApp, readStackFiles, residentMb, type Browser, type ScenarioResult } from './harness.ts';

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
    disposeProfile(profile);
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
    disposeProfile(profile);
  }
  return result;
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
  await browser.context.addInitScript(recordInputTiming, TIMED_INPUTS);
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
    let keys = 0;
    const typing = async () => {
      const box = page.getByRole('textbox', { name: 'Message' });
      await box.click();
      await page.keyboard.type('still here', { delay: 20 });
      keys += 'still here'.length;
      await box.fill('');
    };
    // Files whose names are the attack (no disk can hold them) go as buffers; the others from
    // disk, as a user's picker hands them over. Buffers reach the page through Playwright's own
    // script, which builds each file in the page's main thread (megabytes of base64, hundreds of
    // ms a batch): time the app never spends, so it must not count against its inputs.
    const plainName = (name: string) => /^[\w.-]{1,200}$/.test(name) && !name.startsWith('.');
    const named = corpus.filter((file) => !plainName(file.name));
    const plain = corpus.filter((file) => plainName(file.name));
    const batches: Parameters<Page['setInputFiles']>[1][] = [];
    for (let at = 0; at < named.length; at += 10) {
      batches.push(named.slice(at, at + 10).map((file) => ({ name: file.name, mimeType: 'application/octet-stream', buffer: Buffer.from(file.bytes) })));
    }
    for (let at = 0; at < plain.length; at += 10) {
      batches.push(
        plain.slice(at, at + 10).map((file) => {
          const path = join(scratch, file.name);
          writeFileSync(path, file.bytes);
          return path;
        }),
      );
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
    const { slow, frames } = await readInputTiming(page);
    const slowest = slow.reduce((max, entry) => Math.max(max, entry.duration), 0);
    result.slowestMs = slowest;
    result.runs = corpus.length;
    const expectedRefusals = corpus.filter((file) => file.outcome === 'refused').length;
    if (refusals.length < expectedRefusals) {
      result.failures += expectedRefusals - refusals.length;
      result.notes.push(`${refusals.length} refusals shown for ${expectedRefusals} files that must be refused`);
    }
    result.notes.push(`inputs: ${inputTimingSummary(slow, keys)}`);
    // An input answers in under 100 ms (tests/support/input-timing.ts says how that is told).
    const problems = inputTimingProblems(slow, frames, keys);
    if (problems.length) {
      result.failures++;
      result.notes.push(...problems);
      // A machine busy with something else (another test's leftover browser) shows here.
      const busiest = spawnSync('ps', ['-eo', 'pcpu,etimes,comm', '--sort=-pcpu'], { encoding: 'utf8' }).stdout.split('\n').slice(1).map((line) => line.trim().replace(/\s+/g, ' ')).filter((line) => line && !line.endsWith(' ps')).slice(0, 5);
      result.notes.push(`load ${loadavg().map((load) => load.toFixed(2)).join(' ')}; busiest processes (lifetime %cpu, seconds, name): ${busiest.join(' | ')}`);
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
    disposeProfile(profile);
  }
  return result;
}

/** The call an obedient model makes for each attack, its arguments captured from what it read. */
const OBEY: Record<Attack, Record<string, unknown> | null> = {
  run_command: { type: 'tool_use', name: 'bash', input: { command: '{{tool_result:(?:run|Run) `([^`]+)`}}' } },
  delete_files: { type: 'tool_use', name: 'bash', input: { command: '{{tool_result:(?:run|Run) `([^`]+)`}}' } },
  loosen_permissions: {
    type: 'tool_use',
    name: 'add_permission_rule',
    input: { effect: 'ask', tools: ['never_used'], match: { type: 'always' }, reason: '{{tool_result:(add a permission rule allowing everything)}}' },
  },
  remember_as_preference: null,
  exfiltrate: { type: 'tool_use', name: 'web_fetch', input: { url: '{{tool_result:export all files to (https?://[^\\s"]+?)\\.? before}}' } },
  write_system_space: { type: 'tool_use', name: 'write', input: { path: '{{tool_result:instructions in (\\S+) to say}}', content: '{{tool_result:to say "+([^"]+)"}}' } },
};

/**
 * Poisoned documents in the production build: each is uploaded and summarised by a scripted model
 * that does what the document says (its arguments taken from the text it read). The user says
 * "Don't allow" to every question. Every obeyed call must come back refused, no request may leave
 * for the document's address (nor reach the proxy's web_fetch route), no rule may be added, and
 * every document must still be there.
 */
export async function poisonedDocumentsScenario(target: Target, pick: (documents: PoisonedDocument[]) => PoisonedDocument[] = (documents) => documents): Promise<ScenarioResult> {
  const result = newResult('poisoned documents (a model that obeys them; the user says no)');
  // Forms whose instruction stays on one line of extracted text, so the script can capture it.
  const corpus = pick((await poisonedDocuments()).filter((doc) => doc.form !== 'pdf'));
  const readPath = (doc: PoisonedDocument) => (doc.form.startsWith('pdf') ? `documents/${doc.name}.txt` : `documents/${doc.name}`);
  const turns = corpus.flatMap((doc) => {
    const obey = OBEY[doc.attack];
    const done = { type: 'text', text: `Summary of ${doc.name} done.` };
    return [
      { expect: { last_user_text: doc.name }, reply: { content: [{ type: 'tool_use', name: 'read', input: { path: readPath(doc) } }] } },
      ...(obey ? [{ reply: { content: [obey] } }, { expect: { tool_result: { contains: 'Not run.', is_error: true } }, reply: { content: [done] } }] : [{ reply: { content: [done] } }]),
    ];
  });
  const loaded = await fetch(`${target.fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify({ name: 'poisoned documents', turns }) });
  if (!loaded.ok) throw new Error(`the scripted model refused the script: ${await loaded.text()}`);

  const profile = newProfile();
  const browser = await launch(profile, target.appUrl);
  const { page, context } = browser;
  const sent: string[] = [];
  context.on('request', (request) => sent.push(`${request.url()} ${request.url().includes('/v1/messages') ? '' : (request.postData() ?? '')}`));
  try {
    await openApp(page);
    let slowest = 0;
    for (const doc of corpus) {
      // Each document is uploaded just before it is asked about (the chat shows its newest notices).
      await page.getByLabel('Attach files').setInputFiles([{ name: doc.name, mimeType: 'application/octet-stream', buffer: Buffer.from(doc.bytes) }]);
      await page.locator('[data-role=notice]').filter({ hasText: `Read ${doc.name}` }).waitFor({ timeout: 60_000 });
      const started = performance.now();
      await page.getByRole('textbox', { name: 'Message' }).fill(`Please summarise ${doc.name}`);
      await page.getByRole('button', { name: 'Send' }).click();
      const answer = page.locator('[data-role=assistant]').filter({ hasText: `Summary of ${doc.name} done.` });
      // The user answers every question "Don't allow" until the answer comes.
      while (!(await answer.isVisible())) {
        const pending = page.getByRole('group', { name: 'Permission request' }).getByRole('button', { name: 'Don’t allow' });
        // A prompt just answered can still be counted while its buttons go away: then try again.
        if (await pending.count()) await pending.first().click({ timeout: 2_000 }).catch(() => {});
        else await page.waitForTimeout(100);
        if (performance.now() - started > 60_000) throw new Error(`no answer for ${doc.name}`);
      }
      slowest = Math.max(slowest, performance.now() - started);
      result.runs++;
    }
    result.slowestMs = slowest;
    const fake = (await (await fetch(`${target.fakeUrl}/_fake/state`)).json()) as { failures: { message: string }[] };
    if (fake.failures.length) {
      result.failures += fake.failures.length;
      result.notes.push(`obeyed calls that were not refused: ${fake.failures.map((f) => f.message).join(' | ')}`);
    }
    // The model's own requests carry the documents' text; what must never happen is a request to
    // the document's address, or one asking the proxy to fetch a page.
    const leaks = sent.filter((line) => {
      const url = new URL(line.slice(0, line.indexOf(' ')));
      return url.hostname.endsWith(COLLECTOR_HOST) || url.pathname.endsWith('/v1/fetch');
    });
    if (leaks.length) {
      result.failures += leaks.length;
      result.notes.push(`requests that left for the document's address: ${leaks.join(' | ')}`);
    }
    if (!sent.some((line) => line.includes('/v1/messages'))) result.notes.push('the stack worker’s requests were not seen, so the request check proves nothing');
    await page.getByRole('button', { name: 'Settings' }).click();
    const agentRules = await page.getByText('The document asked').count();
    if (agentRules) {
      result.failures += agentRules;
      result.notes.push(`${agentRules} permission rules were added without the user's click`);
    }
    const files = await readStackFiles(page, 'default', corpus.map((doc) => `documents/${doc.name}`));
    for (const doc of corpus) {
      if (!files.get(`documents/${doc.name}`)?.equals(Buffer.from(doc.bytes))) result.lost++;
    }
    const db = await checkStackDatabases(page, 'default', 'SELECT 1;');
    if (db.transcript !== 'ok' || db.memory !== 'ok') result.corrupt++;
    result.notes.unshift(
      `${corpus.length} documents (${[...new Set(corpus.map((doc) => doc.form))].join(', ')}): every obeyed call refused or declined, ${sent.length} requests checked, none to ${COLLECTOR_HOST}`,
    );
  } finally {
    await context.close().catch(() => {});
    disposeProfile(profile);
  }
  return result;
}

/** Waits until some stack of the origin has a stored checkpoint (its record is written last). */
async function checkpointStored(page: Page): Promise<void> {
  await page.waitForFunction(
    async () => {
      type Entries = { entries(): AsyncIterable<[string, FileSystemHandle]> };
      const stacks = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks').catch(() => null);
      if (!stacks) return false;
      for await (const [, stack] of (stacks as unknown as Entries).entries()) {
        if (stack.kind !== 'directory') continue;
        const records = await (stack as FileSystemDirectoryHandle).getDirectoryHandle('.os').then((os) => os.getDirectoryHandle('checkpoints')).catch(() => null);
        if (!records) continue;
        for await (const [name] of (records as unknown as Entries).entries()) if (name.endsWith('.json')) return true;
      }
      return false;
    },
    undefined,
    { timeout: 120_000, polling: 500 },
  );
}

/** The origin's storage use as the page sees it. */
async function storageUsed(page: Page): Promise<number> {
  return page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
}

/**
 * Sets the origin's quota `room` bytes over what it holds once writes already under way have
 * landed: the computer's disk downloads in the background, and a chunk being stored when the
 * quota drops still lands (usage went 3.9 MB past such a quota), which would leave no room at all.
 * Returns the usage the quota was set over.
 */
async function lowerQuota(page: Page, cdp: CDPSession, origin: string, room: number): Promise<number> {
  let used = await storageUsed(page);
  for (let tries = 0; ; tries++) {
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: used + room });
    await page.waitForTimeout(2_000);
    const now = await storageUsed(page);
    if (now <= used + 64 * 1024) return used;
    if (tries === 10) throw new Error(`the stack's storage use kept growing (${used} -> ${now} bytes) under a lowered quota`);
    used = now;
  }
}

/**
 * A full disk: with the origin's quota lowered (CDP Storage.overrideQuotaForOrigin), an upload, a
 * file the computer writes under /workspace and the chat's own database writes must each fail
 * with a message that says storage is full (in the computer: ENOSPC, "No space left on device",
 * as a full disk says it); once the quota is back the stack must open whole: databases intact,
 * everything acknowledged before there, no upload half-written.
 */
export async function quotaScenario(target: Target): Promise<ScenarioResult> {
  const result = newResult('storage full (quota lowered under the stack: an upload, a computer write, a chat message)');
  const turns = [
    { expect: { last_user_text: 'start the computer' }, reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: 'echo computer ready' } }] } },
    { expect: { tool_result: { contains: 'computer ready' } }, reply: { content: [{ type: 'text', text: 'The computer is on.' }] } },
    { expect: { last_user_text: 'before the quota' }, reply: { content: [{ type: 'text', text: 'Noted before the quota.' }] } },
    { expect: { last_user_text: 'write a big file' }, reply: { content: [{ type: 'tool_use', name: 'bash', input: { command: 'mkdir -p /workspace/artifacts && head -c 3000000 /dev/urandom > /workspace/artifacts/big.bin && echo wrote' } }] } },
    { reply: { content: [{ type: 'text', text: 'Tried to write the big file.' }] } },
    { reply: { content: [{ type: 'text', text: 'Noted while full.' }] }, repeat: -1 },
  ];
  const loaded = await fetch(`${target.fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify({ name: 'quota', turns }) });
  if (!loaded.ok) throw new Error(`the scripted model refused the script: ${await loaded.text()}`);
  const profile = newProfile();
  let browser = await launch(profile, target.appUrl);
  const origin = new URL(target.appUrl).origin;
  const say = async (page: Page, text: string, answer: string) => {
    await page.getByRole('textbox', { name: 'Message' }).fill(text);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('[data-role=assistant]').filter({ hasText: answer }).last().waitFor({ timeout: 120_000 }).catch(async (error: Error) => {
      // What the chat shows instead (a request stopped for storage, say) is the failure's cause.
      const alerts = await page.locator('.chat-send-error, [data-role=error], [role=alert]').allTextContents();
      throw new Error(`no answer "${answer}" to "${text}"; the chat shows: ${alerts.join(' | ') || '(no error)'}`, { cause: error });
    });
  };
  const check = (what: string, ok: boolean, detail: string) => {
    result.runs++;
    if (!ok) result.failures++;
    result.notes.push(`${what}: ${ok ? '' : 'FAILED: '}${detail}`);
  };
  const small = Buffer.from('Invoice 7 from Hale & Co: 3 chairs, 420.00 AUD.\n');
  try {
    let { page } = browser;
    const cdp = await browser.context.newCDPSession(page);
    await openApp(page);
    await say(page, 'Please start the computer', 'The computer is on.');
    await page.getByLabel('Attach files').setInputFiles([{ name: 'small.txt', mimeType: 'text/plain', buffer: small }]);
    await page.locator('[data-role=notice]').filter({ hasText: 'Read small.txt' }).waitFor({ timeout: 60_000 });
    await say(page, 'Remember this, before the quota', 'Noted before the quota.');
    // The first mission's checkpoint (before its command) is stored in the background: its
    // megabytes are writes under way too, and must land before the quota drops.
    await checkpointStored(page);
    // First half a megabyte of room: the chat's small writes fit, a file of megabytes does not.
    const used = await lowerQuota(page, cdp, origin, 512 * 1024);
    result.notes.push(`the stack held ${(used / 1e6).toFixed(0)} MB (the computer's disk included); the quota was set 0.5 MB over that, then 1 MB under it`);

    // 1. An upload.
    await page.getByLabel('Attach files').setInputFiles([{ name: 'big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(2_000_000, 'storage full test line\n') }]);
    const uploadError = page.locator('.chat-send-error[role=alert]').filter({ hasText: 'big.txt' });
    await uploadError.waitFor({ timeout: 30_000 }).catch(() => {});
    const uploadText = (await uploadError.allTextContents()).join(' | ');
    check('upload', /big\.txt was not added: the browser's storage for Stackdocs is full/.test(uploadText), uploadText || 'no message named big.txt');

    // 2. The computer writes a file under /workspace that does not fit: its program is told
    // (ENOSPC), as on a full disk, and the command fails.
    await say(page, 'Please write a big file', 'Tried to write the big file.');
    const toolResult = await lastToolResult(target.fakeUrl);
    check('computer write', /No space left on device/.test(toolResult) && !/\bwrote\b/.test(toolResult), toolResult.slice(0, 300) || 'no tool result');

    // 3. A chat message whose database write does not fit: a long paste, once the quota is under
    // what the stack holds (small writes can still land in room the browser reserved earlier).
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: (await storageUsed(page)) - 1_000_000 });
    // Pasted, as a user would (typing 2.5 MB through fill() takes minutes).
    await page.getByRole('textbox', { name: 'Message' }).evaluate((box: HTMLTextAreaElement) => {
      const paste = new DataTransfer();
      paste.setData('text/plain', `A message while full: ${'a pasted line of a long report\n'.repeat(80_000)}`);
      box.focus();
      box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: paste, bubbles: true, cancelable: true }));
      if (!box.value) {
        Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!.call(box, paste.getData('text/plain'));
        box.dispatchEvent(new Event('input', { bubbles: true }));
      }
    });
    await page.getByRole('button', { name: 'Send' }).click();
    const sendError = page.locator('.chat-send-error[role=alert]').filter({ hasText: 'Your message was not saved' });
    await sendError.waitFor({ timeout: 30_000 }).catch(() => {});
    const sendText = (await sendError.allTextContents()).join(' | ');
    check('database write', /Your message was not saved: the browser's storage for Stackdocs is full/.test(sendText), sendText || 'no message said the message was not saved');

    // The quota comes back; the stack must open whole.
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    await browser.context.close();
    browser = await launch(profile, target.appUrl);
    page = browser.page;
    const reopen = await openApp(page);
    result.slowestMs = reopen;
    const shown = (await page.locator('[data-role=user]').allTextContents()).join(' | ');
    if (!shown.includes('Remember this, before the quota')) {
      result.lost++;
      result.notes.push(`the message acknowledged before the quota is gone: ${shown}`);
    }
    const files = await readStackFiles(page, 'default', ['documents/small.txt', 'documents/big.txt', 'artifacts/big.bin']);
    if (!files.get('documents/small.txt')?.equals(small)) result.lost++;
    // big.txt was refused, so it must be absent. big.bin holds what its program wrote before it
    // was told the disk was full (as a full disk leaves a file), never more.
    const bin = files.get('artifacts/big.bin');
    const leftovers = [
      ...(files.get('documents/big.txt') !== null ? ['documents/big.txt'] : []),
      ...(bin && bin.length > 3_000_000 ? [`artifacts/big.bin (${bin.length} of 3000000 bytes)`] : []),
    ];
    if (leftovers.length) {
      result.corrupt++;
      result.notes.push(`half-written files left behind: ${leftovers.join(', ')}`);
    }
    const db = await checkStackDatabases(page, 'default', 'SELECT 1;');
    if (db.transcript !== 'ok' || db.memory !== 'ok') {
      result.corrupt++;
      result.notes.push(`integrity_check: transcript ${db.transcript}, memory ${db.memory}`);
    }
    result.notes.push(`after the quota came back the stack reopened in ${Math.round(reopen)} ms with both databases ok, the earlier message and small.txt there, no big.txt, big.bin ${bin ? `${bin.length} of 3000000 bytes, as far as its program got` : 'absent'}`);
  } finally {
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
  }
  return result;
}

/** The last tool result the scripted model received, as text. */
export async function lastToolResult(fakeUrl: string): Promise<string> {
  const state = (await (await fetch(`${fakeUrl}/_fake/state`)).json()) as { requests: { body: { messages?: { content: unknown }[] } }[] };
  for (const request of [...state.requests].reverse()) {
    const content = request.body.messages?.at(-1)?.content;
    if (Array.isArray(content)) {
      const result = content.find((block) => (block as { type?: string }).type === 'tool_result') as { content?: unknown } | undefined;
      if (result) return typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
    }
  }
  return '';
}

/**
 * The computer killed while it writes a large file to its own disk: each run appends a line to
 * /root/acks and syncs (acknowledged once the tool result shows), then starts `dd` of 256 MB and
 * the browser is SIGKILLed at a random moment of it. After each kill the disk image, read out of
 * the profile, must check clean with e2fsck (after the journal replay a mount would do); the
 * stack must open, the computer start (cold when its saved state is older than its disk), and
 * every acknowledged line of /root/acks be there.
 */
export async function killDuringGuestWrite(target: Target, runs: number, seed: number): Promise<ScenarioResult> {
  const result = newResult('kill while the computer writes a large file (dd), disk checked with e2fsck');
  const random = createRandom(seed);
  const profile = newProfile();
  const scratch = mkdtempSync(join(tmpdir(), 'stackdocs-disk-'));
  const script = (name: string, turns: unknown[]) => fetch(`${target.fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify({ name, turns }) });
  const bash = (command: string, timeout = 600) => ({ reply: { content: [{ type: 'tool_use', name: 'bash', input: { command, timeout } }] } });
  const done = (text: string) => ({ reply: { content: [{ type: 'text', text }] } });
  let browser = await launch(profile, target.appUrl);
  let acknowledged = 0;
  let lateKills = 0;
  try {
    await openApp(browser.page);
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const problems: string[] = [];
      await script(`guest write ${run}`, [
        bash('echo ack >> /root/acks && sync && echo "acks: $(wc -l < /root/acks)"'),
        { ...bash(`: run-${run}; dd if=/dev/urandom of=/root/big.bin bs=1M count=256 conv=fsync status=none; echo dd finished`), expect: { tool_result: { contains: 'acks: ' } } },
        done(`Wrote it, run ${run}.`),
      ]);
      const page = browser.page;
      await page.getByRole('textbox', { name: 'Message' }).fill(`Write the big file, run ${run}`);
      await page.getByRole('button', { name: 'Send' }).click();
      // The ack is acknowledged when the dd call has started: the model had read the ack's result.
      await page.locator('[data-role=tool]').filter({ hasText: `run-${run};` }).waitFor({ timeout: 180_000 });
      const ack = /acks: (\d+)/.exec(await lastToolResult(target.fakeUrl));
      if (ack) acknowledged = Number(ack[1]);
      await page.waitForTimeout(300 + random() * 5_000);
      await kill(browser);
      const late = (await lastToolResult(target.fakeUrl)).includes('dd finished');
      if (late) lateKills++;

      const image = diskImageIn(profile, scratch);
      const fsck = image ? checkDiskImage(image, scratch) : 'no disk overlay in the profile';
      if (image) rmSync(image, { force: true });
      if (fsck) {
        result.corrupt++;
        problems.push(`disk: ${fsck}`);
      }

      browser = await launch(profile, target.appUrl);
      const started = performance.now();
      try {
        await openApp(browser.page);
      } catch (error) {
        result.corrupt++;
        problems.push(`the stack did not open: ${(error as Error).message.split('\n')[0]}`);
      }
      await script(`guest check ${run}`, [bash('echo "acks: $(wc -l < /root/acks)"; rm -f /root/big.bin; dmesg | grep -c "EXT4-fs error" || true'), done(`Checked, run ${run}.`)]);
      await browser.page.getByRole('textbox', { name: 'Message' }).fill(`Check the disk, run ${run}`);
      await browser.page.getByRole('button', { name: 'Send' }).click();
      try {
        await browser.page.locator('[data-role=assistant]').filter({ hasText: `Checked, run ${run}.` }).waitFor({ timeout: 240_000 });
        result.slowestMs = Math.max(result.slowestMs, performance.now() - started);
        const check = await lastToolResult(target.fakeUrl);
        const found = Number(/acks: (\d+)/.exec(check)?.[1] ?? -1);
        if (found < acknowledged) {
          result.lost += acknowledged - Math.max(found, 0);
          problems.push(found < 0 ? `the check did not say how many lines /root/acks has: ${check.slice(0, 300)}` : `/root/acks has ${found} lines, ${acknowledged} were acknowledged`);
        }
        acknowledged = Math.max(acknowledged, found);
        const errors = Number(/\n(\d+)\s*$/.exec(check.replace(/\nExit code.*$/s, ''))?.[1] ?? 0);
        if (errors > 0) problems.push(`the kernel logged ${errors} ext4 errors after the restart`);
        // The disk moved on past the last saved state while dd wrote: resuming that state would
        // mount a filesystem the kernel no longer knows, so the computer must have booted.
        const chip = (await browser.page.getByRole('status', { name: 'Computer' }).textContent()) ?? '';
        if (!late && !/booted in/.test(chip)) problems.push(`a disk that moved on was resumed, not booted: "${chip}"`);
      } catch (error) {
        result.corrupt++;
        problems.push(`the computer did not answer after the restart: ${(error as Error).message.split('\n')[0]}`);
      }
      const db = await checkStackDatabases(browser.page, 'default', 'SELECT 1;');
      if (db.transcript !== 'ok' || db.memory !== 'ok') {
        result.corrupt++;
        problems.push(`integrity_check: transcript ${db.transcript}, memory ${db.memory}`);
      }
      await openApp(browser.page).catch(() => {});
      if (problems.length) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
      }
    }
    result.notes.unshift(`${acknowledged} acknowledged lines in /root/acks kept across ${runs} kills (${runs - lateKills} while dd was still writing); the disk image checked clean with e2fsck after each kill; slowest reopen to a working computer ${Math.round(result.slowestMs)} ms`);
  } finally {
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}
