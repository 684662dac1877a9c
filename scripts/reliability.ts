// `npm run reliability [-- --runs N] [SCENARIO...]`: the reliability scenarios in full against the
// production build (the scripted model behind the real proxy), then docs/reliability.md: per
// scenario, runs, failures, rows or files lost, corrupt stacks and the slowest recovery.
// SCENARIO: kill-chat, kill-upload, kill-settings, kill-guest-write, two-tabs, hostile-uploads,
// poisoned-documents, quota (default: all).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeModel } from '../tests/fake-model/server.ts';
import type { ScenarioResult } from '../tests/reliability/harness.ts';
import { hostileUploads, killDuring, killDuringGuestWrite, poisonedDocumentsScenario, quotaScenario, twoTabs, type Target } from '../tests/reliability/scenarios.ts';
import { ensureFixtures } from '../tests/fixtures/generate.ts';
import { serveStack } from './lib/serve.mjs';
const root = join(import.meta.dirname, '..');

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const kills = runsAt >= 0 ? Number(args[runsAt + 1]) : 20;
const chosen = args.filter((arg, i) => !arg.startsWith('--') && !(runsAt >= 0 && i === runsAt + 1));
const SCENARIOS: Record<string, (target: Target) => Promise<ScenarioResult>> = {
  'kill-chat': (target) => killDuring(target, 'chat', kills, 1),
  'kill-upload': (target) => killDuring(target, 'upload', kills, 2),
  'kill-settings': (target) => killDuring(target, 'settings', kills, 3),
  'kill-guest-write': (target) => killDuringGuestWrite(target, kills, 4),
  'two-tabs': (target) => twoTabs(target, Math.max(kills, 50)),
  'hostile-uploads': (target) => hostileUploads(target),
  'poisoned-documents': (target) => poisonedDocumentsScenario(target),
  quota: (target) => quotaScenario(target),
};
/** How each scenario's title starts, to keep the table in the order above. */
const SCENARIO_TITLES: Record<string, string> = {
  'kill-chat': 'kill during a burst',
  'kill-upload': 'kill during uploads',
  'kill-settings': 'kill during settings',
  'kill-guest-write': 'kill while the computer writes',
  'two-tabs': 'two tabs',
  'hostile-uploads': 'hostile uploads',
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
const stack = await serveStack({ appPort: 4197, proxyPort: 8811, apiKey: 'test-reliability-key', upstream: fake.url, quiet: true });
const results: ScenarioResult[] = [];
try {
  for (const name of names) {
    const started = performance.now();
    const result = await SCENARIOS[name]!({ appUrl: stack.appUrl, fakeUrl: fake.url });
    results.push(result);
    console.log(JSON.stringify({ ...result, seconds: Math.round((performance.now() - started) / 1000) }));
  }
} finally {
  await stack.close();
  await fake.close();
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
setting the page had acknowledged before the kill must be there. Poisoned documents
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
