// The tree's TypeScript sources under a folder, as the architecture tests read them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { SourceFile } from './import-rules.ts';

export const root = join(import.meta.dirname, '..', '..');

/** The product folders: what ships or builds what ships (not tests or benchmarks). */
export const PRODUCT_FOLDERS = ['app', 'protocol', 'storage', 'worker', 'vm', 'memory', 'cloudflare-proxy/src', 'scripts'];

/** The TypeScript files under a folder, read. */
export const sources = (folder: string): SourceFile[] => walkFolder(folder, false);

/** Every file under a folder but hidden ones: code read, any other file named with no text. */
export const everyFile = (folder: string): SourceFile[] => walkFolder(folder, true);

function walkFolder(folder: string, everyFile: boolean): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || (everyFile && entry.name.startsWith('.'))) continue;
      const full = join(dir, entry.name);
      const path = relative(root, full).split('\\').join('/');
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push({ path, source: readFileSync(full, 'utf8') });
      else if (everyFile) out.push({ path, source: /\.(tsx?|mts|mjs|js)$/.test(entry.name) ? readFileSync(full, 'utf8') : '' });
    }
  };
  walk(join(root, folder));
  return out;
}

/** A product file, not a test of one. */
export const isProduct = (file: SourceFile) => !/\.(test|browser\.test|property\.test)\.tsx?$/.test(file.path) && !file.path.includes('/testing/');
