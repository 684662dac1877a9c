// `npm run reliability [-- --runs N] [SCENARIO...]`: the reliability scenarios in full against the
// production build (the scripted model behind the real proxy), then docs/reliability.md: per
// scenario, runs, failures, rows or files lost, corrupt stacks and the slowest recovery.
// SCENARIO: kill-chat, kill-upload, kill-settings, kill-guest-write, kill-relay, kill-export,
// kill-import, kill-restore, import-two-tabs, two-tabs, hostile-uploads, hostile-stacks, poisoned-documents,
// quota (default: all).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeModel } from '../tests/fake-model/server.ts';
import type { ScenarioResult } from '../tests/reliability/harness.ts';
import type { RelayTarget } from '../tests/reliability/relay.ts';
import { hostileUploads, killDuring, killDuringGuestWrite, poisonedDocumentsScenario, quotaScenario, twoTabs } from '../tests/reliability/scenarios.ts';
import { killDuringRelayDownload } from '../tests/reliability/relay.ts';
import { killDuringRestore } from '../tests/reliability/restore.ts';
import { hostileStackFiles, importWhileOpening, killDuringExport, killDuringImport } from '../tests/reliability/stack-files.ts';
import { ensureFixtures } from '../tests/fixtures/generate.ts';
import { startTestInternet } from '../tests/support/test-internet.ts';
import { serveStack } from './lib/serve.mjs';
const root = join(import.meta.dirname, '..');

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const kills = runsAt >= 0 ? Number(args[runsAt + 1]) : 20;
const chosen = args.filter((arg, i) => !arg.startsWith('--') && !(runsAt >= 0 && i === runsAt + 1));
/** The app's system image, which the hostile stack files are made over (else the first refusal would be the image's). */
const appImage = () => (JSON.parse(readFileSync(join(root, 'vm-images', 'out', 'latest', 'manifest.json'), 'utf8')) as { recipeHash: string }).recipeHash;
const SCENARIOS: Record<string, (target: RelayTarget) => Promise<ScenarioResult>> = {
  'kill-chat': (target) => killDuring(target, 'chat', kills, 1),
  'kill-upload': (target) => killDuring(target, 'upload', kills, 2),
  'kill-settings': (target) => killDuring(target, 'settings', kills, 3),
  'kill-guest-write': (target) => killDuringGuestWrite(target, kills, 4),
  'kill-relay': (target) => killDuringRelayDownload(target, kills, 5),
  'kill-export': (target) => killDuringExport(target, kills, 6),
  'kill-import': (target) => killDuringImport(target, kills, 7),
  'kill-restore': (target) => killDuringRestore(target, kills, 8),
  'import-two-tabs': (target) => importWhileOpening(target, Math.max(5, Math.round(kills / 2))),
  'two-tabs': (target) => twoTabs(target, Math.max(kills, 50)),
  'hostile-uploads': (target) => hostileUploads(target),
  'hostile-stacks': (target) => hostileStackFiles(target, appImage()),
  'poisoned-documents': (target) => poisonedDocumentsScenario(target),
  quota: (target) => quotaScenario(target),
};
/** How each scenario's title starts, to keep the table in the order above. */
const SCENARIO_TITLES: Record<string, string> = {
  'kill-chat': 'kill during a burst',
  'kill-upload': 'kill during uploads',
  'kill-settings': 'kill during settings',
  'kill-guest-write': 'kill while the computer writes',
  'kill-relay': 'kill while the relay',
  'kill-export': 'kill during an export',
  'kill-import': 'kill during an import',
  'kill-restore': 'kill during a checkpoint restore',
  'import-two-tabs': 'two tabs: one imports',
  'two-tabs': 'two tabs taking',
  'hostile-uploads': 'hostile uploads',
  'hostile-stacks': 'hostile stack files',
  'poisoned-documents': 'poisoned documents',
  quota: 'storage full',
};
const names = chosen.length ? chosen : Object.keys(SCENARIOS);
for (const name of names) {
  if (!SCENARIOS[name]) {
    console.error(`Unknown scenario "${name}". Scenarios: ${Object.keys(SCENARIOS).join(', ')}`);
    process.exit(2);
  }
}

await ensureFixtures(console.log);
const fake = await startFakeModel({ port: 0 });
// The computer's "internet" for the relay's downloads: a file server and a resolver on this
// machine, which only this configuration lets the proxy reach.
const internet = await startTestInternet();
const stack = await serveStack({
  appPort: 4197,
  proxyPort: 8811,
  apiKey: 'test-reliability-key',
  upstream: fake.url,
  net: { allowedHosts: ['*.index.test'], allowedPorts: [internet.indexPort], allowPrivate: [internet.indexHost], dnsUpstream: internet.dnsUrl },
  quiet: true,
});
const results: ScenarioResult[] = [];
try {
  for (const name of names) {
    const started = performance.now();
    const result = await SCENARIOS[name]!({ appUrl: stack.appUrl, fakeUrl: fake.url, indexPort: internet.indexPort, bigFileSha256: internet.bigFileSha256 });
    results.push(result);
    console.log(JSON.stringify({ ...result, seconds: Math.round((performance.now() - started) / 1000) }));
  }
} finally {
  await stack.close();
  await fake.close();
  await internet.close();
}

// Scenarios not run this time keep their last figures (kept as JSON at the end of the page).
const path = join(root, 'docs', 'reliability.md');
const MARK = '<!-- results ';
const today = new Date().toISOString().slice(0, 10);
const previous: (ScenarioResult & { date?: string })[] = (() => {
  try {
    const text = readFileSync(path, 'utf8');
    const at = text.lastIndexOf(MARK);
    return at < 0 ? [] : (JSON.parse(text.slice(at + MARK.length, text.lastIndexOf(' -->'))) as (ScenarioResult & { date?: string })[]);
  } catch {
    return [];
  }
})();
const merged = [...previous.filter((old) => !results.some((r) => r.scenario === old.scenario)), ...results.map((r) => ({ ...r, date: today }))];
const order = (r: ScenarioResult) => Object.keys(SCENARIOS).findIndex((name) => r.scenario.startsWith(SCENARIO_TITLES[name] ?? name));
merged.sort((a, b) => order(a) - order(b));
const row = (r: ScenarioResult) => `| ${r.scenario} | ${r.runs} | ${r.failures} | ${r.lost} | ${r.corrupt} | ${(r.slowestMs / 1000).toFixed(1)} s |`;
const doc = `# Reliability

Written by \`npm run reliability\` (the date of each run is beside its notes): a real Chromium
with a persistent profile, the production build, the scripted model behind the real proxy. A kill
is SIGKILL of every Chromium process at a random moment (seeded). After each one the stack must
open, \`PRAGMA integrity_check\` must say \`ok\` for transcript.db and memory.db (checked with
Debian's sqlite3 on the files read out of OPFS, outside the app), and every message, upload and
setting the page had acknowledged before the kill must be there. A kill during an export must
leave the stack whole and nothing of the export in it; one during an import must leave no half
stack (what is listed is the file's stack whole and restricted, or nothing) and the stack open and
the file untouched; one during a checkpoint restore must leave exactly the stack before it or
exactly the checkpoint, never a mix; one while the proxy's relay carries a download into the computer must leave a
disk that checks clean with e2fsck and a relay that carries the same download whole after. The
hostile stack files (\`tests/fixtures/hostile-stacks.ts\`, made over the app's own system image)
go through the stacks panel of the production build, each to be refused with its own reason and
leave nothing behind. Poisoned documents
(\`tests/fixtures/poisoned.ts\`) are summarised by a scripted model that does what they say: every
call it makes must be refused by a rule or declined by the user, and no request may go to the
documents' address; what memory learns from them (stored as theirs, never as the user's rule) is
checked with all 30 documents, visible PDFs included, by \`worker/poisoned-documents.test.ts\` in
\`npm test\`. The e2e suite runs each scenario a few times (\`tests/e2e/reliability.spec.ts\`).

| Scenario | Runs | Failures | Rows/files lost | Corrupt stacks | Slowest recovery (reopen, take-over, input) |
| --- | --- | --- | --- | --- | --- |
${merged.map(row).join('\n')}

${merged.flatMap((r) => [`**${r.scenario}**${r.date ? ` (${r.date})` : ''}`, '', ...r.notes.map((note) => `- ${note}`), '']).join('\n')}
${MARK}${JSON.stringify(merged)} -->
`;
writeFileSync(path, doc);
console.log(`Wrote docs/reliability.md`);
process.exit(results.some((r) => r.failures || r.lost || r.corrupt) ? 1 : 0);
