// Bundles the Worker (src/index.ts) into one ES module for workerd: dist/worker.mjs.
import { build } from 'esbuild';
import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const entryPath = fileURLToPath(new URL('./src/index.ts', import.meta.url));
export const workerPath = fileURLToPath(new URL('./dist/worker.mjs', import.meta.url));

/** Builds dist/worker.mjs and returns its path. Throws on a build error. */
export async function buildWorker() {
  const result = await build({
    entryPoints: [entryPath],
    outfile: workerPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    // The runtime's own modules (the Durable Object base class).
    external: ['cloudflare:*'],
    logLevel: 'warning',
    write: false,
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild produced no output for the proxy Worker');
  // Several proxies may start at once (parallel test files); a rename is atomic, so none of them
  // reads a half-written bundle.
  await mkdir(dirname(workerPath), { recursive: true });
  const temporary = `${workerPath}.${randomUUID()}.tmp`;
  await writeFile(temporary, output.contents);
  await rename(temporary, workerPath);
  return workerPath;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await buildWorker();
  console.log(`Built ${workerPath} in ${Math.round(performance.now() - started)} ms`);
}
