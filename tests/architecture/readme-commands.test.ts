// Every npm command the READMEs show must exist: a reader who copies one gets a working command.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const scripts = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
// npm's own commands that need no script.
const BUILT_IN = new Set(['install', 'ci', 'audit', 'ls', 'help', 'exec']);

/** `npm start`, `npm test`, `npm run X` as written in a text's code (spans and fenced blocks). */
export function npmCommands(markdown: string): string[] {
  const text = [...markdown.matchAll(/```[\s\S]*?```|`[^`\n]+`/g)].map(([code]) => code).join('\n');
  const found = new Set<string>();
  for (const [, run] of text.matchAll(/\bnpm run ([\w:-]+)/g)) found.add(run!);
  for (const [, direct] of text.matchAll(/\bnpm (start|test|stop|restart)\b/g)) found.add(direct!);
  for (const [, other] of text.matchAll(/\bnpm (?!run\b)([a-z][\w-]*)/g)) if (!['start', 'test', 'stop', 'restart'].includes(other!) && !BUILT_IN.has(other!)) found.add(`?${other}`);
  return [...found];
}

const readmes = [join(root, 'README.md'), ...readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules' && e.name !== 'dist').flatMap((e) => {
  try {
    readFileSync(join(root, e.name, 'README.md'));
    return [join(root, e.name, 'README.md')];
  } catch {
    return [];
  }
})];

describe('README commands', () => {
  it('finds the commands in a text, and flags an unknown npm verb', () => {
    expect(npmCommands('Run `npm start`, then `npm run bench -- ocr`; `npm install` first; `npm frobnicate`; npm dependencies.\n```sh\nnpm run fixtures\n```')).toEqual(['bench', 'fixtures', 'start', '?frobnicate']);
  });

  it.each(readmes.map((path) => [path.slice(root.length + 1), path]))('%s names only npm scripts that exist', (_name, path) => {
    const missing = npmCommands(readFileSync(path, 'utf8')).filter((command) => !scripts.includes(command));
    expect(missing).toEqual([]);
  });
});
