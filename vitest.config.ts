// Test projects: `unit` runs in Node beside the code; `browser` runs in real Chromium.
// End-to-end tests are Playwright's (playwright.config.ts), not vitest's.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { playwright } from '@vitest/browser-playwright';
import { chromiumArgs, chromiumPath } from './tests/support/chromium.ts';
import { vmImageModule } from './scripts/vm-image-plugin.ts';
import { rendererMemoryMb } from './tests/support/process-memory.ts';

/**
 * The test that boots the real image in v86 takes minutes on one core: it starts first, and every
 * other file runs beside it on the other worker (on two cores, the whole run takes about as long
 * as that one test).
 */
class BootFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const boots = (file: TestSpecification) => file.moduleId.endsWith('.boot.test.ts');
    return [...sorted.filter(boots), ...sorted.filter((file) => !boots(file))];
  }
}

export default defineConfig({
  test: {
    // Vitest's default leaves one core free: on a 2-core machine, one file at a time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: BootFirst },
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          // The generated invoice fixtures, made once before any test file reads them.
          globalSetup: ['tests/fixtures/global-setup.ts'],
          include: ['{app,protocol,storage,worker,vm,memory,tests,cloudflare-proxy,scripts,bench}/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'tests/e2e/**', '**/*.browser.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        // Pre-bundled up front: a mid-run re-optimisation reloads the page under a running test.
        // Everything the stack worker imports is listed, so a fresh clone's first run does not
        // discover one mid-test; wa-sqlite and zstd stay out so their wasm is found beside their modules.
        // The stack worker imports `virtual:vm-image` (where the computer's image is served).
        plugins: [vmImageModule()],
        worker: { format: 'es', plugins: () => [vmImageModule()] },
        optimizeDeps: {
          include: ['@anthropic-ai/sdk', 'zod', 'comlink', 'fflate', 'hash-wasm', 'eventsource-parser', 'papaparse', 'pdfjs-dist', 'pdf-lib', 'crc-32', 'picomatch', 'tesseract.js', 'write-excel-file/universal', 'file-type', '@xterm/xterm', '@xterm/addon-fit', 'yaml', 'croner', 'read-excel-file/universal', 'mammoth', 'utif2', 'fast-png', '@modelcontextprotocol/sdk/client/index.js', '@modelcontextprotocol/sdk/client/streamableHttp.js', '@modelcontextprotocol/sdk/shared/stdio.js', '@modelcontextprotocol/sdk/validation/cfworker-provider.js'],
          exclude: ['@journeyapps/wa-sqlite', '@bokuweb/zstd-wasm'],
        },
        test: {
          name: 'browser',
          // A fresh clone's first run also pre-bundles dependencies and compiles the SQLite wasm.
          testTimeout: 60_000,
          include: ['{app,protocol,storage,worker,vm,memory,tests}/**/*.browser.test.ts'],
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: { executablePath: chromiumPath, args: chromiumArgs } }),
            instances: [{ browser: 'chromium' }],
            // `commands.rendererMemoryMb()` in a test: the renderers' resident memory, from /proc.
            commands: { rendererMemoryMb: () => rendererMemoryMb() },
          },
        },
      },
    ],
  },
});
