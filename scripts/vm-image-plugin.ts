// Where the computer's image is (vm-images/out/latest) and the `virtual:vm-image` module that
// names it to the app. Shared by vite.config.ts and vitest.config.ts: workers get their own
// plugins, so both configs list it for workers too.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'vite';

/** `base` is where the development server serves the image; the build puts it at `vm/<hash>/` beside index.html. */
export function findVmImage(): { dir: string; hash: string; base: string } | null {
  const latest = join(import.meta.dirname, '..', 'vm-images/out/latest');
  if (!existsSync(join(latest, 'manifest.json'))) return null;
  const dir = realpathSync(latest);
  const hash = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { recipeHash: string }).recipeHash;
  return { dir, hash, base: `/vm/${hash}/` };
}

/** `virtual:vm-image` alone: the stack worker imports it, and workers get their own plugins. */
export function vmImageModule(): Plugin {
  // Relative to the app's root: the built app may be served from any path.
  const hash = findVmImage()?.hash;
  const base = hash ? `vm/${hash}/` : null;
  return {
    name: 'stackdocs:vm-image-module',
    resolveId: (id) => (id === 'virtual:vm-image' ? '\0virtual:vm-image' : undefined),
    load: (id) => (id === '\0virtual:vm-image' ? `export const vmImageBase = ${JSON.stringify(base)};` : undefined),
  };
}
