// The test MCP server as one self-contained file for Node 18 (the computer's Debian node), built
// with esbuild and cached by the hash of its source.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = join(import.meta.dirname, '..', '..');
const source = join(import.meta.dirname, 'test-server.ts');
const register = join(import.meta.dirname, 'register.ts');

/** The bundled server's path (built once per source). */
export async function bundleTestServer(): Promise<string> {
  const hash = createHash('sha256').update(readFileSync(source)).update(readFileSync(register)).update(readFileSync(join(root, 'package-lock.json'))).digest('hex').slice(0, 16);
  const dir = join(root, 'node_modules', '.cache', 'stackdocs-mcp');
  const out = join(dir, `test-server-${hash}.mjs`);
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  await build({ entryPoints: [source], bundle: true, platform: 'node', target: 'node18', format: 'esm', outfile: out, minify: true, legalComments: 'none', logLevel: 'error' });
  return out;
}
