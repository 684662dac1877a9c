// `npm run bench [-- NAME...]`: sets up what is missing, then runs bench/run.ts.
import { ensureChromium, ensureDependencies, run } from './lib/setup.mjs';

try {
  ensureDependencies();
  ensureChromium();
} catch (error) {
  console.error(`npm run bench could not set up: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
process.exit(run('npx', ['tsx', 'bench/run.ts', ...process.argv.slice(2)]));
