// The reliability scenarios of stacks as files: the browser killed while a stack is exported and
// while one is imported, two tabs where one imports a stack the other opens, and the hostile stack
// corpus (tests/fixtures/hostile-stacks.ts) through the production build's own dialog.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { createRandom } from '../fixtures/invoices.ts';
import { hostileStacks } from '../fixtures/hostile-stacks.ts';
import { browserPids, checkStackDatabases, disposeProfile, kill, launch, newProfile, newResult, openApp, residentMb, type Browser, type ScenarioResult } from './harness.ts';
import type { Target } from './scenarios.ts';

const MB = 1_000_000;
const menu = (page: Page) => page.getByRole('button', { name: /^Stack: / });
const panel = (page: Page) => page.getByRole('region', { name: 'Stacks' });

async function openMenu(page: Page): Promise<void> {
  if (!(await panel(page).isVisible())) await menu(page).click();
  await panel(page).waitFor({ timeout: 30_000 });
}

/** A browser with no save picker, so an export is downloaded (the picker cannot be driven). */
async function launchForFiles(profile: string, appUrl: string): Promise<Browser> {
  const browser = await launch(profile, appUrl);
  await browser.context.addInitScript(() => {
    delete (Window.prototype as { showSaveFilePicker?: unknown }).showSaveFilePicker;
    delete (window as { showSaveFilePicker?: unknown }).showSaveFilePicker;
  });
  return browser;
}

/** On a page of the app's origin that does not run the app: `stacks/` folders, each with its record (null when unreadable). */
async function stackFolders(page: Page): Promise<{ id: string; meta: { name?: string; copying?: boolean } | null; trusted: boolean }[]> {
  await page.goto('/manifest.webmanifest');
  return page.evaluate(async () => {
    const found: { id: string; meta: { name?: string; copying?: boolean } | null; trusted: boolean }[] = [];
    const stacks = await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks', { create: true });
    for await (const [id, handle] of (stacks as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
      if (handle.kind !== 'directory') continue;
      // (No named functions in here: the runner's transform would name them with a helper the page lacks.)
      const config = await (handle as FileSystemDirectoryHandle)
        .getDirectoryHandle('.os')
        .then((os) => os.getDirectoryHandle('config'))
        .catch(() => null);
      const meta = config ? await config.getFileHandle('stack.json').then(async (file) => JSON.parse(await (await file.getFile()).text()) as { name?: string; copying?: boolean }, () => null) : null;
      const trusted = config ? !(await config.getFileHandle('trust.json').then(() => true, () => false)) : true;
      found.push({ id, meta, trusted });
    }
    return found;
  });
}

/** SHA-256 of each file under a stack's folder (path → hex), hashed in the page so no bytes cross to Node; `under` limits it to one folder. */
async function stackHashes(page: Page, stack: string, under: string): Promise<Record<string, string>> {
  await page.goto('/manifest.webmanifest');
  return page.evaluate(
    async ({ stack, under }) => {
      const out: Record<string, string> = {};
      let dir: FileSystemDirectoryHandle;
      try {
        dir = await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).getDirectoryHandle(stack);
        for (const part of under.split('/')) dir = await dir.getDirectoryHandle(part);
      } catch {
        return out;
      }
      // Walked with a list rather than a named function: the runner's transform would name it with a helper the page lacks.
      const pending: [FileSystemDirectoryHandle, string][] = [[dir, `${under}/`]];
      for (let next = pending.pop(); next; next = pending.pop()) {
        const [at, prefix] = next;
        for await (const [name, handle] of (at as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
          const path = `${prefix}${name}`;
          if (handle.kind === 'directory') pending.push([handle as FileSystemDirectoryHandle, `${path}/`]);
          else {
            const digest = await crypto.subtle.digest('SHA-256', await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer());
            out[path] = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
          }
        }
      }
      return out;
    },
    { stack, under },
  );
}

/** Writes `count` files of `mb` MB of random bytes (zstd cannot shrink them) into the stack's artifacts/, in the page. */
async function fillArtifacts(page: Page, stack: string, count: number, mb: number): Promise<void> {
  await page.goto('/manifest.webmanifest');
  await page.evaluate(
    async ({ stack, count, bytes }) => {
      let dir = await (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks', { create: true })).getDirectoryHandle(stack, { create: true });
      dir = await dir.getDirectoryHandle('artifacts', { create: true });
      const chunk = new Uint8Array(1 << 20);
      for (let n = 0; n < count; n++) {
        const writable = await (await dir.getFileHandle(`random-${n}.bin`, { create: true })).createWritable();
        for (let at = 0; at < bytes; at += chunk.byteLength) {
          for (let i = 0; i < chunk.byteLength; i += 65536) crypto.getRandomValues(chunk.subarray(i, i + 65536));
          await writable.write(chunk.subarray(0, Math.min(chunk.byteLength, bytes - at)));
        }
        await writable.close();
      }
    },
    { stack, count, bytes: mb * MB },
  );
}

async function removeStack(page: Page, id: string): Promise<void> {
  await page.goto('/manifest.webmanifest');
  await page.evaluate(async (id) => (await (await navigator.storage.getDirectory()).getDirectoryHandle('stacks')).removeEntry(id, { recursive: true }), id);
}

/** A chat turn the scripted model answers at once, acknowledged when the answer shows. */
async function sayAndWait(page: Page, fakeUrl: string, text: string): Promise<void> {
  await fetch(`${fakeUrl}/_fake/script`, { method: 'POST', body: JSON.stringify({ name: 'stack files', turns: [{ reply: { content: [{ type: 'text', text: `Noted: ${text}` }] }, repeat: -1 }] }) });
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('textbox', { name: 'Message' }).press('Enter');
  await page.locator('[data-role=assistant]').filter({ hasText: `Noted: ${text}` }).waitFor({ timeout: 60_000 });
}

const differences = (before: Record<string, string>, after: Record<string, string>) => [
  ...Object.keys(before).filter((path) => after[path] !== before[path]).map((path) => (after[path] ? `${path} changed` : `${path} missing`)),
  ...Object.keys(after).filter((path) => !(path in before)).map((path) => `${path} appeared`),
];

/** Starts the export of the open stack through its dialog (downloaded); resolves when it says it is done. */
async function startExport(page: Page): Promise<{ done: Promise<void> }> {
  await openMenu(page);
  await panel(page).getByRole('button', { name: 'Export stack…' }).click();
  const dialog = page.getByRole('dialog', { name: /^Export “/ });
  await dialog.getByRole('button', { name: 'Export' }).click();
  return { done: dialog.getByRole('status').waitFor({ timeout: 10 * 60_000 }) };
}

/**
 * The browser killed at a random moment of an export (the stack closed, its databases copied, the
 * file written): afterwards the stack opens, its databases check clean, every acknowledged message
 * and every file is there unchanged, and nothing of the export is left in the stack.
 */
export async function killDuringExport(target: Target, runs: number, seed: number): Promise<ScenarioResult> {
  const result = newResult('kill during an export');
  const random = createRandom(seed);
  const profile = newProfile();
  let browser = await launchForFiles(profile, target.appUrl);
  const messages: string[] = [];
  let midway = 0;
  try {
    await openApp(browser.page);
    await sayAndWait(browser.page, target.fakeUrl, 'export me whole');
    messages.push('export me whole');
    await fillArtifacts(browser.page, 'default', 4, 20);
    const files = await stackHashes(browser.page, 'default', 'artifacts');
    await openApp(browser.page);
    // One export whole first: how long one takes, so the kills spread over it.
    let started = performance.now();
    const download = browser.page.waitForEvent('download', { timeout: 10 * 60_000 });
    await (await startExport(browser.page)).done;
    await download;
    const exportMs = performance.now() - started;
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const problems: string[] = [];
      const page = browser.page;
      await page.getByRole('dialog').getByRole('button', { name: 'Open the stack again' }).click({ timeout: 5_000 }).catch(() => {});
      await openApp(page);
      await sayAndWait(page, target.fakeUrl, `before export ${run}`);
      messages.push(`before export ${run}`);
      started = performance.now();
      const exporting = await startExport(page);
      const killAt = random() * exportMs * 1.1;
      const finished = await Promise.race([exporting.done.then(() => true, () => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), Math.max(0, killAt - (performance.now() - started))))]);
      if (!finished) midway++;
      await kill(browser);

      browser = await launchForFiles(profile, target.appUrl);
      try {
        result.slowestMs = Math.max(result.slowestMs, await openApp(browser.page));
      } catch (error) {
        result.corrupt++;
        problems.push(`the stack did not open: ${(error as Error).message.split('\n')[0]}`);
      }
      const db = await checkStackDatabases(browser.page, 'default', "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued';");
      if (db.transcript !== 'ok' || db.memory !== 'ok') {
        result.corrupt++;
        problems.push(`integrity_check: transcript ${db.transcript}, memory ${db.memory}`);
      }
      const lostMessages = messages.filter((text) => !db.rows.includes(text));
      const changed = differences(files, await stackHashes(browser.page, 'default', 'artifacts'));
      const left = Object.keys(await stackHashes(browser.page, 'default', '.os/snapshot'));
      if (lostMessages.length + changed.length) problems.push(`lost: ${[...lostMessages, ...changed].join(', ')}`);
      if (left.length) problems.push(`the export's copies are left in the stack: ${left.join(', ')}`);
      result.lost += lostMessages.length + changed.length;
      if (problems.length) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
      }
      await openApp(browser.page).catch(() => {});
    }
    result.notes.unshift(`${runs} kills over an export of ${Math.round(exportMs)} ms (${midway} while it was still writing) of a stack of 80 MB of files and ${messages.length} messages: each time the stack opened with every file and message; reopen ${Math.round(result.slowestMs)} ms at the slowest`);
  } finally {
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
  }
  return result;
}

/** A `.stack` file exported from a fresh profile's stack: 100 MB of random files and a message. Returns its path. */
async function makeStackFile(target: Target, scratch: string): Promise<{ path: string; files: Record<string, string> }> {
  const profile = newProfile();
  const browser = await launchForFiles(profile, target.appUrl);
  try {
    await openApp(browser.page);
    await sayAndWait(browser.page, target.fakeUrl, 'a stack to import');
    await fillArtifacts(browser.page, 'default', 5, 20);
    const files = await stackHashes(browser.page, 'default', 'artifacts');
    await openApp(browser.page);
    const download = browser.page.waitForEvent('download', { timeout: 10 * 60_000 });
    await (await startExport(browser.page)).done;
    const path = join(scratch, 'imported.stack');
    await (await download).saveAs(path);
    return { path, files };
  } finally {
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
  }
}

/** Picks `path` in the stacks panel; resolves when the new stack is open here (its id), rejects on a refusal. */
async function startImport(page: Page, path: string): Promise<{ done: Promise<string> }> {
  await openMenu(page);
  await panel(page).getByLabel('Stack file to open').setInputFiles(path);
  return { done: page.waitForURL(/\?stack=s-/, { timeout: 10 * 60_000 }).then(() => new URL(page.url()).searchParams.get('stack')!) };
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * The browser killed at a random moment of an import: afterwards the app lists no half stack (a
 * folder left is either the whole stack, restricted, or gone once the list is read), the stack
 * that was open is as it was, and the file is untouched.
 */
export async function killDuringImport(target: Target, runs: number, seed: number): Promise<ScenarioResult> {
  const result = newResult('kill during an import (no half stack, the source untouched)');
  const random = createRandom(seed);
  const scratch = mkdtempSync(join(tmpdir(), 'stackdocs-import-'));
  const profile = newProfile();
  let browser: Browser | null = null;
  let midway = 0;
  let whole = 0;
  try {
    const source = await makeStackFile(target, scratch);
    const fileSha = sha256(source.path);
    browser = await launchForFiles(profile, target.appUrl);
    await openApp(browser.page);
    await sayAndWait(browser.page, target.fakeUrl, 'the stack that stays');
    await fillArtifacts(browser.page, 'default', 1, 5);
    const own = await stackHashes(browser.page, 'default', 'artifacts');
    // One import whole first: how long one takes.
    await openApp(browser.page);
    let started = performance.now();
    const first = await (await startImport(browser.page, source.path)).done;
    const importMs = performance.now() - started;
    await removeStack(browser.page, first);
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const problems: string[] = [];
      const page = browser.page;
      await openApp(page, '/?stack=default');
      started = performance.now();
      const importing = await startImport(page, source.path);
      const killAt = random() * importMs * 1.1;
      const finished = await Promise.race([importing.done.then(() => true, () => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), Math.max(0, killAt - (performance.now() - started))))]);
      if (!finished) midway++;
      await kill(browser);

      browser = await launchForFiles(profile, target.appUrl);
      try {
        result.slowestMs = Math.max(result.slowestMs, await openApp(browser.page, '/?stack=default'));
      } catch (error) {
        result.corrupt++;
        problems.push(`the app did not open: ${(error as Error).message.split('\n')[0]}`);
      }
      // The list the user sees (reading it clears what a killed import left). It shows the names
      // this page remembered first, among them a stack this scenario removed behind its back, then
      // the stacks worker's own list: what counts is where it settles, against the folders in
      // storage (read by a second page, so this one keeps its list open).
      await openMenu(browser.page);
      const peek = await browser.context.newPage();
      let listedNames: string[] = [];
      let folders: Awaited<ReturnType<typeof stackFolders>> = [];
      for (const until = performance.now() + 10_000; performance.now() < until; await browser.page.waitForTimeout(250)) {
        listedNames = await panel(browser.page).locator('.stack-row').evaluateAll((items) => items.map((item) => item.getAttribute('aria-label') ?? ''));
        folders = await stackFolders(peek);
        if (folders.length === listedNames.length) break;
      }
      await peek.close();
      const others = folders.filter((folder) => folder.id !== 'default');
      if (others.length !== listedNames.length - 1) problems.push(`${listedNames.length} stacks listed (${listedNames.join(', ')}), ${folders.length} folders in storage`);
      for (const other of others) {
        if (other.meta?.copying || !other.meta) {
          result.corrupt++;
          problems.push(`a half stack is left: ${other.id} (${JSON.stringify(other.meta)})`);
        } else {
          const changed = differences(source.files, await stackHashes(browser.page, other.id, 'artifacts'));
          if (changed.length) {
            result.corrupt++;
            problems.push(`the stack imported as "${other.meta.name}" differs from the file: ${changed.slice(0, 5).join(', ')}`);
          } else whole++;
          if (other.trusted) problems.push(`"${other.meta.name}" was imported without its restriction`);
        }
        await removeStack(browser.page, other.id);
      }
      const db = await checkStackDatabases(browser.page, 'default', "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued';");
      if (db.transcript !== 'ok' || db.memory !== 'ok') {
        result.corrupt++;
        problems.push(`integrity_check: transcript ${db.transcript}, memory ${db.memory}`);
      }
      const changed = differences(own, await stackHashes(browser.page, 'default', 'artifacts'));
      const lost = changed.length + (db.rows.includes('the stack that stays') ? 0 : 1) + (sha256(source.path) === fileSha ? 0 : 1);
      if (lost) problems.push(`the source was touched: ${[...changed, ...(db.rows.includes('the stack that stays') ? [] : ['its message']), ...(sha256(source.path) === fileSha ? [] : ['the .stack file'])].join(', ')}`);
      result.lost += lost;
      if (problems.length) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
      }
    }
    result.notes.unshift(
      `${runs} kills over an import of ${Math.round(importMs)} ms (a ${(readFileSync(source.path).length / MB).toFixed(0)} MB file; ${midway} while it was still copying): each time no half stack was listed or left, ${whole} stacks found whole and restricted, the rest gone; the open stack and the file untouched; reopen ${Math.round(result.slowestMs)} ms at the slowest`,
    );
  } finally {
    await browser?.context.close().catch(() => {});
    disposeProfile(profile);
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}

/**
 * Two tabs of one browser: one imports a stack file while the other keeps its stack list open and
 * opens the new stack the moment it is listed. It must never be listed before it is whole; once
 * whole, one tab at a time owns it (the other says so), and what either wrote in it is kept.
 */
export async function importWhileOpening(target: Target, runs: number): Promise<ScenarioResult> {
  const result = newResult('two tabs: one imports a stack while the other opens it');
  const scratch = mkdtempSync(join(tmpdir(), 'stackdocs-import-two-'));
  const profile = newProfile();
  let browser: Browser | null = null;
  try {
    const source = await makeStackFile(target, scratch);
    browser = await launchForFiles(profile, target.appUrl);
    const [a, b, peek] = [browser.page, await browser.context.newPage(), await browser.context.newPage()];
    // Tab B works in a stack of its own, with its list of stacks at hand.
    await openApp(a);
    await openMenu(a);
    await panel(a).getByRole('button', { name: 'New stack…' }).click();
    const ask = a.getByRole('dialog', { name: 'New stack' });
    await ask.getByRole('textbox', { name: 'Name' }).fill('Client work');
    await ask.getByRole('button', { name: 'Create' }).click();
    await a.waitForURL(/\?stack=s-/);
    const own = new URL(a.url()).searchParams.get('stack')!;
    for (let run = 1; run <= runs; run++) {
      result.runs++;
      const problems: string[] = [];
      await openApp(a, '/?stack=default');
      await openApp(b, `/?stack=${own}`);
      const started = performance.now();
      let settled = false;
      const importing = (await startImport(a, source.path)).done
        .catch(async (error: Error) => {
          const said = await a.getByRole('dialog').getByRole('alert').textContent({ timeout: 1_000 }).catch(() => null);
          problems.push(`the import failed: ${said ?? error.message.split('\n')[0]}`);
          return null;
        })
        .finally(() => (settled = true));
      // Tab B reads its list again and again, and opens a new stack the moment one shows.
      let openedIn: string | null = null;
      // Until it shows, or the import has ended some seconds before without it showing.
      let settledAt = Infinity;
      while (performance.now() - started < 5 * 60_000 && performance.now() - settledAt < 10_000) {
        if (settled && settledAt === Infinity) settledAt = performance.now();
        await openMenu(b);
        const row = panel(b).locator('.stack-row').filter({ hasText: /\(imported/ });
        if ((await row.count()) > 0) {
          // What storage holds the moment the row shows, read by a third page of the origin.
          const half = (await stackFolders(peek)).filter((folder) => folder.id !== 'default' && folder.id !== own && (folder.meta?.copying || !folder.meta));
          if (half.length) {
            result.corrupt++;
            problems.push(`listed while its import was unfinished: ${half.map((folder) => folder.id).join(', ')}`);
          }
          await row.first().locator('.stack-open').click();
          openedIn = 'b';
          break;
        }
        // Closed and opened again: the list is read afresh each time it opens.
        await menu(b).click();
        await b.waitForTimeout(50);
      }
      const id = await importing;
      result.slowestMs = Math.max(result.slowestMs, performance.now() - started);
      if (!id) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
        continue;
      }
      if (!openedIn) problems.push('the imported stack was never listed in the other tab');
      // Both tabs now show it: exactly one owns it, the other offers to take it over.
      await b.waitForURL(new RegExp(`stack=${id}`), { timeout: 30_000 }).catch(() => problems.push(`the other tab did not open ${id}`));
      // Read as the tabs are now, without waiting for either to show a message box.
      const owners = async () => {
        const ready = await Promise.all([a, b].map(async (tab) => {
          const box = tab.getByRole('textbox', { name: 'Message' });
          return (await box.count()) === 1 && (await box.isEnabled().catch(() => false));
        }));
        const offers = await Promise.all([a, b].map((tab) => tab.getByRole('button', { name: /take over|use it here/i }).isVisible().catch(() => false)));
        return { ready, offers };
      };
      let state = await owners();
      for (let wait = 0; wait < 100 && !(state.ready.filter(Boolean).length === 1 && state.offers.filter(Boolean).length === 1); wait++) {
        await a.waitForTimeout(200);
        state = await owners();
      }
      if (state.ready.filter(Boolean).length !== 1 || state.offers.filter(Boolean).length !== 1) problems.push(`owners ${JSON.stringify(state)}`);
      const owner = state.ready[0] ? a : b;
      const text = `in the imported stack ${run}`;
      await sayAndWait(owner, target.fakeUrl, text).catch(() => problems.push(`"${text}" was not answered`));
      // Whole: every file of the file's stack, and the message the owner wrote.
      const other = owner === a ? b : a;
      await other.goto('/manifest.webmanifest');
      await owner.goto('/manifest.webmanifest');
      const changed = differences(source.files, await stackHashes(owner, id, 'artifacts'));
      if (changed.length) {
        result.corrupt++;
        problems.push(`the imported stack differs from the file: ${changed.slice(0, 5).join(', ')}`);
      }
      const db = await checkStackDatabases(owner, id, "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued';");
      if (db.transcript !== 'ok' || db.memory !== 'ok') result.corrupt++;
      if (!db.rows.includes(text)) {
        result.lost++;
        problems.push(`"${text}" is not in the stack`);
      }
      await removeStack(owner, id);
      if (problems.length) {
        result.failures++;
        result.notes.push(`run ${run}: ${problems.join('; ')}`);
      }
    }
    result.notes.unshift(`${runs} imports of a ${(readFileSync(source.path).length / MB).toFixed(0)} MB file while the other tab listed and opened it: never listed before it was whole; one owner at a time; slowest import and take-over ${Math.round(result.slowestMs)} ms`);
  } finally {
    await browser?.context.close().catch(() => {});
    disposeProfile(profile);
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}

/**
 * Every file of the hostile stack corpus, made over the app's own system image, opened through the
 * stacks panel of the production build: each refused with its own reason in the dialog, no stack
 * or folder left, the browser's memory sampled throughout, and the stack open before still works.
 */
export async function hostileStackFiles(target: Target, recipe: string): Promise<ScenarioResult> {
  const result = newResult('hostile stack files (bombs, names, journals, images, damage)');
  // The corpus's room is given to the importer as the browser's estimate; here it can only be a
  // quota lowered through DevTools, which this Chromium enforces on writes but does not report to
  // navigator.storage.estimate(): a file over the ceiling of that room would be written (the
  // ceiling itself is met by the 5 GiB file), and one over the room is refused by the write.
  const all = await hostileStacks(recipe);
  const corpus = all.filter((stack) => !(stack.estimate && /ceiling/.test(stack.name)));
  const scratch = mkdtempSync(join(tmpdir(), 'stackdocs-hostile-stacks-'));
  const profile = newProfile();
  const browser = await launchForFiles(profile, target.appUrl);
  const { page } = browser;
  let peakMb = 0;
  let idleMb = 0;
  const sampler = setInterval(() => (peakMb = Math.max(peakMb, residentMb(browserPids(profile)))), 250);
  try {
    await openApp(page);
    await sayAndWait(page, target.fakeUrl, 'before the hostile files');
    idleMb = residentMb(browserPids(profile));
    peakMb = idleMb;
    const cdp = await browser.context.newCDPSession(page);
    const origin = new URL(target.appUrl).origin;
    await openMenu(page);
    const before = await panel(page).locator('.stack-row').count();
    for (const stack of corpus) {
      result.runs++;
      const path = join(scratch, `${stack.name}.stack`);
      writeFileSync(path, stack.bytes);
      if (stack.estimate) {
        // The room the corpus says, as this browser's quota: what it holds now plus what is free.
        const used = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
        await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: used + (stack.estimate.quota! - stack.estimate.usage!) });
      }
      const started = performance.now();
      await openMenu(page);
      await panel(page).getByLabel('Stack file to open').setInputFiles(path);
      const dialog = page.getByRole('dialog', { name: `Open “${stack.name}.stack”` });
      const said = await dialog.getByRole('alert').textContent({ timeout: 60_000 }).catch(() => null);
      result.slowestMs = Math.max(result.slowestMs, performance.now() - started);
      const problems: string[] = [];
      if (said === null) problems.push('no refusal was shown');
      else if (!(typeof stack.says === 'string' ? said.includes(stack.says) : stack.says.test(said)) && !(stack.estimate && /^The stack was not imported: the browser's storage for Stackdocs is full/.test(said))) problems.push(`said "${said}"`);
      await dialog.getByRole('button', { name: /^(Close|Cancel)$/ }).click({ timeout: 5_000 }).catch(() => {});
      if (stack.estimate) await cdp.send('Storage.overrideQuotaForOrigin', { origin });
      await openMenu(page);
      const listed = await panel(page).locator('.stack-row').count();
      if (listed !== before) problems.push(`${listed - before} stacks left behind`);
      if (problems.length) {
        result.failures++;
        result.notes.push(`${stack.name} (${stack.what}): ${problems.join('; ')}`);
      }
    }
    await page.keyboard.press('Escape');
    // Nor any folder, and the stack that was open answers as before.
    const folders = await stackFolders(page);
    if (folders.length !== before) {
      result.corrupt++;
      result.notes.push(`folders left in storage: ${folders.map((folder) => folder.id).join(', ')}`);
    }
    await openApp(page);
    await sayAndWait(page, target.fakeUrl, 'after the hostile files').catch(() => {
      result.failures++;
      result.notes.push('the stack open before did not answer afterwards');
    });
    const db = await checkStackDatabases(page, 'default', "SELECT json_extract(json, '$.text') FROM events WHERE type = 'mission_queued';");
    if (db.transcript !== 'ok' || db.memory !== 'ok') result.corrupt++;
    const lost = ['before the hostile files', 'after the hostile files'].filter((text) => !db.rows.includes(text));
    result.lost += lost.length;
    if (lost.length) result.notes.push(`lost: ${lost.join(', ')}`);
    result.notes.unshift(
      `${corpus.length} of the corpus's ${all.length} files (${(corpus.reduce((sum, stack) => sum + stack.bytes.byteLength, 0) / MB).toFixed(1)} MB in all) through the stacks panel: ${result.runs - result.failures} refused with their own reason, each within ${(result.slowestMs / 1000).toFixed(1)} s; no stack or folder left; Chromium's processes peaked ${peakMb - idleMb} MB above the open app (summed RSS, ${idleMb} MB before)`,
    );
  } finally {
    clearInterval(sampler);
    await browser.context.close().catch(() => {});
    disposeProfile(profile);
    rmSync(scratch, { recursive: true, force: true });
  }
  return result;
}
