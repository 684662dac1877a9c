import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOutsideReferences } from './self-contained.ts';

const root = join(import.meta.dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', '.git', 'test-results', 'out', '.cache', '.wrangler']);

/** The tracked files (git ls-files), or, in a copy without git, every file outside build outputs. */
function trackedFiles(): string[] {
  if (existsSync(join(root, '.git'))) {
    return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  }
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(entry.name)) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(relative(root, full).split('\\').join('/'));
    }
  };
  walk(root);
  return out;
}

describe('the repository stands on its own', () => {
  it('has no tracked file outside docs/ that refers to a path outside the repository', () => {
    const files = trackedFiles().filter((path) => !path.startsWith('docs/'));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((path) => {
      const bytes = readFileSync(join(root, path));
      if (bytes.includes(0)) return []; // binary
      return findOutsideReferences(path, bytes.toString('utf8')).map((ref) => `${ref.path}:${ref.line} ${ref.reference}`);
    });
    expect(found).toEqual([]);
  });

  it('catches a sibling folder reached by a relative path, in code and in prose', () => {
    // Built from parts, so this file does not itself name a folder outside the repository.
    const up = (levels: number) => '../'.repeat(levels);
    const sibling = `${up(2)}shared/fixtures/invoices`;
    expect(findOutsideReferences('bench/ocr.ts', `const FIXTURES = new URL('${sibling}/', import.meta.url);`)).toEqual([{ path: 'bench/ocr.ts', line: 1, reference: sibling }]);
    expect(findOutsideReferences('worker/documents/a.test.ts', `x\nreadFileSync(\`${up(3)}shared/fixtures/\${name}\`)`)).toHaveLength(1);
    expect(findOutsideReferences('README.md', `See [the notes](${up(1)}shared/notes/vm.md).`)).toHaveLength(1);
    expect(findOutsideReferences('scripts/run.sh', `cd ${up(2)}other-checkout && make`)).toHaveLength(1);
  });

  it('lets paths inside the repository and path-guard test inputs be', () => {
    expect(findOutsideReferences('worker/documents/a.test.ts', "new URL('../../tests/support/fixtures.ts', import.meta.url)")).toEqual([]);
    expect(findOutsideReferences('memory/b.test.ts', "normalizeStackPath('documents/../../etc')")).toEqual([]);
    expect(findOutsideReferences('app/README.md', 'see [worker](../worker/README.md)')).toEqual([]);
  });
});
