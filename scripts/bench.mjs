// `npm run bench [-- NAME...]`: sets up what is missing, then runs bench/run.ts through Vite's
// module loader, which resolves the same imports the app's build does (e.g. `?raw` descriptions).
import { ensureChromium, ensureDependencies, ensureFixtures, root } from './lib/setup.mjs';

try {
  ensureDependencies();
  ensureChromium();
  ensureFixtures();
} catch (error) {
  console.error(`npm run bench could not set up: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
// Set after the setup (npm ci under NODE_ENV=production would leave out the dev dependencies) and
// before Vite loads: its dev server would otherwise mark the process as development, and the app
// builds inside the benchmarks must be production builds.
process.env.NODE_ENV = 'production';
const { createServer } = await import('vite');
const server = await createServer({
  root,
  configFile: false,
  logLevel: 'error',
  appType: 'custom',
  server: { middlewareMode: true, hmr: false, ws: false },
  // Only Node-side modules are loaded here; nothing to pre-bundle for a browser.
  optimizeDeps: { noDiscovery: true, include: [] },
});
try {
  await server.ssrLoadModule('/bench/run.ts');
} finally {
  await server.close();
}
