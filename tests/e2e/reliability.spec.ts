// The reliability scenarios (tests/reliability/), a few runs each, so `npm test` keeps them
// working; `npm run reliability` runs them in full and writes docs/reliability.md.
import { expect, test } from './test.ts';
import { hostileUploads, killDuring, killDuringGuestWrite, poisonedDocumentsScenario, quotaScenario, twoTabs, type Target } from '../reliability/scenarios.ts';
import type { ScenarioResult } from '../reliability/harness.ts';
import { hostileStackFiles, importWhileOpening, killDuringExport, killDuringImport } from '../reliability/stack-files.ts';
import { killDuringRelayDownload } from '../reliability/relay.ts';
import { killDuringRestore } from '../reliability/restore.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { E2E_APP_URL } from './ports.ts';

// The DOM snapshots a trace takes around each Playwright action run in the page's main thread
// (40-60 ms each, profiled), where they would count against the app's own input times (the hostile
// uploads' typing); without them a trace still records every action, its timing and the console.
test.use({ trace: { mode: 'retain-on-failure', snapshots: false, screenshots: false } });

const target = (): Target => ({ appUrl: E2E_APP_URL, fakeUrl: process.env.E2E_FAKE_URL! });

function expectClean(result: ScenarioResult, runs: number): void {
  console.log(`${result.scenario}: ${result.runs} runs, ${result.failures} failures, slowest ${Math.round(result.slowestMs)} ms`);
  expect(result.notes.filter((note) => note.startsWith('run ') || note.startsWith('take-over ') || note.startsWith('lost'))).toEqual([]);
  expect({ runs: result.runs, failures: result.failures, lost: result.lost, corrupt: result.corrupt }).toEqual({ runs, failures: 0, lost: 0, corrupt: 0 });
}

test('killed mid chat burst, mid upload and mid settings change: the stack opens whole, nothing acknowledged lost', async () => {
  test.setTimeout(180_000);
  expectClean(await killDuring(target(), 'chat', 3, 11), 3);
  expectClean(await killDuring(target(), 'upload', 2, 12), 2);
  expectClean(await killDuring(target(), 'settings', 2, 13), 2);
});

test('two tabs take one stack over from each other: one owner at a time, nothing lost', async () => {
  test.setTimeout(120_000);
  expectClean(await twoTabs(target(), 8), 8);
});

test('hostile uploads: each refused by name or read safely, inputs answer in under 100 ms, nothing else touched', async () => {
  test.setTimeout(300_000);
  // Every third file of the corpus, and every bomb and renamed program (npm run reliability: all 101).
  const result = await hostileUploads(target(), 7, (files) => files.filter((file, i) => i % 3 === 0 || file.outcome === 'refused'));
  console.log(result.notes.join('\n'));
  // Slow inputs count as failures there, told as tests/support/input-timing.ts tells them (the
  // app's part strictly, the screen with a slow machine's tolerance).
  expectClean(result, result.runs);
  expect(result.runs).toBeGreaterThan(40);
});

test('poisoned documents: a model that obeys them gets every call refused or declined, nothing leaves', async () => {
  test.setTimeout(240_000);
  // Every attack as plain text and as a PDF's invisible text (npm run reliability: four forms).
  const result = await poisonedDocumentsScenario(target(), (documents) => documents.filter((doc) => doc.form === 'txt' || doc.form === 'pdf-hidden'));
  console.log(result.notes[0]);
  expectClean(result, result.runs);
  expect(result.runs).toBeGreaterThanOrEqual(12);
  expect(result.notes.filter((note) => note.includes('proves nothing'))).toEqual([]);
});

test('storage full: an upload, a computer write and a chat message each say so; the stack reopens whole', async () => {
  test.setTimeout(240_000);
  const result = await quotaScenario(target());
  console.log(result.notes.join('\n'));
  expectClean(result, 3);
});

test('killed while the computer writes a large file: the disk checks clean with e2fsck, acknowledged writes stay', async () => {
  test.setTimeout(300_000);
  expectClean(await killDuringGuestWrite(target(), 1, 14), 1);
});

test('stacks as files: killed mid export and mid import, nothing lost and no half stack; 60 hostile stack files refused in the dialog', async () => {
  test.setTimeout(600_000);
  expectClean(await killDuringExport(target(), 2, 16), 2);
  expectClean(await killDuringImport(target(), 2, 17), 2);
  const recipe = (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'vm-images', 'out', 'latest', 'manifest.json'), 'utf8')) as { recipeHash: string }).recipeHash;
  const hostile = await hostileStackFiles(target(), recipe);
  console.log(hostile.notes.join('\n'));
  expect(hostile.notes.slice(1)).toEqual([]);
  expect(hostile.runs).toBeGreaterThanOrEqual(60);
  expectClean(hostile, hostile.runs);
});

test('killed while the relay carries a download into the computer: the disk checks clean, the download comes through after', async () => {
  test.setTimeout(900_000);
  expectClean(await killDuringRelayDownload({ ...target(), indexPort: Number(process.env.E2E_INDEX_PORT), bigFileSha256: process.env.E2E_BIG_FILE_SHA256! }, 1, 15), 1);
});

test('killed during a checkpoint restore: the stack comes back exactly as it was or exactly as the checkpoint, never a mix', async () => {
  test.setTimeout(900_000);
  // Its notes say where each kill landed; only failures, losses and damage count.
  const result = await killDuringRestore(target(), 2, 18);
  console.log(result.notes.join('\n'));
  expect({ runs: result.runs, failures: result.failures, lost: result.lost, corrupt: result.corrupt }).toEqual({ runs: 2, failures: 0, lost: 0, corrupt: 0 });
});

test('two tabs: a stack imported in one is opened in the other the moment it is listed, never before it is whole', async () => {
  test.setTimeout(300_000);
  expectClean(await importWhileOpening(target(), 2), 2);
});
