// `npm test`: installs what is missing (dependencies, Chromium), then type-checks and runs every
// test tier: unit (Node) and browser (Chromium) with vitest, end-to-end with Playwright on the
// production build. Runs every tier even when one fails, then prints one summary line.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { ensureChromium, ensureDependencies, ensureFixtures, ensureVmImage, root, run, step } from './lib/setup.mjs';

const results = `${root}test-results`;
const failures = [];
let passed = 0;
let failed = 0;

function tier(name, command, args, count) {
  step(name);
  const status = run(command, args);
  const counted = count?.();
  if (counted) {
    passed += counted.passed;
    failed += counted.failed;
  }
  if (status !== 0) failures.push(`${name} (exit ${status})`);
}

function readJson(file) {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

try {
  ensureDependencies();
  ensureChromium();
  ensureFixtures();
  ensureVmImage();
} catch (error) {
  console.error(`\nnpm test could not set up: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}

rmSync(results, { recursive: true, force: true });
mkdirSync(results, { recursive: true });

tier('Type check (app, worker, tests)', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
tier('Type check (cloudflare-proxy)', 'npm', ['run', 'typecheck', '--silent', '-w', 'cloudflare-proxy']);
tier('Unit and browser tests (vitest)', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile=${results}/vitest.json`], () => {
  const report = readJson(`${results}/vitest.json`);
  return report && { passed: report.numPassedTests, failed: report.numFailedTests };
});
tier('End-to-end tests (Playwright, production build)', 'npx', ['playwright', 'test'], () => {
  const report = readJson(`${results}/e2e.json`);
  return report && { passed: report.stats.expected + report.stats.flaky, failed: report.stats.unexpected };
});

console.log('');
if (failures.length) console.log(`Failed: ${failures.join('; ')}`);
// A tier that failed before counting anything still counts as a failure in the summary.
console.log(`${passed} passed, ${failed + (failures.length && !failed ? failures.length : 0)} failed`);
process.exit(failures.length ? 1 : 0);
