// End-to-end tests: Playwright drives Debian's Chromium against the production build, with the
// real proxy under Miniflare in front of the scripted fake model (tests/e2e/global-setup.ts).
import { defineConfig } from '@playwright/test';
import { chromiumArgs, chromiumPath } from './tests/support/chromium.ts';
import { E2E_APP_URL } from './tests/e2e/ports.ts';

export default defineConfig({
  testDir: 'tests/e2e',
  globalSetup: './tests/e2e/global-setup.ts',
  // One proxy and one scripted model serve every test, so tests take turns.
  workers: 1,
  fullyParallel: false,
  // A test that passes only on a second try is a failure: it would fail a user too.
  retries: 0,
  // Waits, not speed goals (benchmarks measure speed): on a machine running 4-5x slower than
  // usual, a reply streamed beside a computer starting up took over 10 s to show in full.
  timeout: 120_000,
  expect: { timeout: 20_000 },
  reporter: [['list'], ['json', { outputFile: 'test-results/e2e.json' }]],
  outputDir: 'test-results/e2e-artifacts',
  use: {
    baseURL: E2E_APP_URL,
    browserName: 'chromium',
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
    viewport: { width: 1280, height: 800 },
    trace: 'retain-on-failure',
  },
});
