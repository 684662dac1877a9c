// Each product folder's README tells the truth about the folder: its files, and what it may import
// (the rules are written at the top of readme-rules.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceFile } from './import-rules.ts';
import { findReadmeProblems, mayImport } from './readme-rules.ts';
import { everyFile, root } from './sources.ts';

/**
 * The folders whose README is checked. bench/ and tests/ list benchmarks and test tiers rather than
 * files and may import anything; docs/, public/ and templates/ hold no code.
 */
const CHECKED = ['app', 'protocol', 'storage', 'worker', 'vm', 'memory', 'cloudflare-proxy', 'scripts'];

/** Folders .gitignore names at the top (node_modules/, dist/, test-results/…): made here, never in the tree. */
const ignored = new Set(
  readFileSync(join(root, '.gitignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim().replace(/^\//, ''))
    .filter((line) => /^[\w.-]+\/$/.test(line))
    .map((line) => line.slice(0, -1)),
);
const topFolders = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !ignored.has(entry.name))
  .map((entry) => entry.name);

describe('folder READMEs', () => {
  it.each(CHECKED)('%s/README.md names every file, no missing one, and every package imported', (folder) => {
    const files = everyFile(folder);
    expect(files.length).toBeGreaterThan(3);
    const readme = readFileSync(join(root, folder, 'README.md'), 'utf8');
    expect(findReadmeProblems({ folder, readme, files, topFolders })).toEqual([]);
  });

  it("README.md's layout names every top folder, each with a README", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const layout = readme.slice(readme.indexOf('## Layout'));
    const missing = topFolders.filter((folder) => !layout.includes(`[${folder}/](${folder}/README.md)`));
    expect(missing).toEqual([]);
    expect(topFolders.filter((folder) => !existsSync(join(root, folder, 'README.md')))).toEqual([]);
  });

  it('catches a file without a line, a line without a file, and an import not allowed', () => {
    const readme = [
      '# worker/',
      '',
      'May import: `protocol/`, `zod`, `@modelcontextprotocol/sdk`.',
      '',
      '| File | What |',
      '| --- | --- |',
      '| `stack.ts` | The stack. |',
      '| `gone.ts` | A file since removed. |',
      '| `tools/*.md` | Each tool\'s description. |',
      '| `bench*.ts` | The benchmark. |',
      '',
      '- `checkpoints/` — `record.ts` the format; `take.ts` takes one; see `vm/disk.ts` and `stack.json`.',
      '- `tools/` — one file per tool.',
    ].join('\n');
    const files: SourceFile[] = [
      { path: 'worker/stack.ts', source: "import { z } from 'zod';\nimport type { StackApi } from '../protocol/stack-api.ts';\nimport { Client } from '@modelcontextprotocol/sdk/client/index.js';" },
      { path: 'worker/stack.test.ts', source: "import { it } from 'vitest';" },
      { path: 'worker/__snapshots__/stack.test.ts.snap', source: '' },
      { path: 'worker/tools/bash.md', source: '' },
      { path: 'worker/tools/bash.ts', source: "import { readFile } from 'node:fs/promises';" },
      { path: 'worker/checkpoints/record.ts', source: "import { sha256Hex } from '../../storage/hash.ts';" },
      { path: 'worker/checkpoints/store.ts', source: "import { zipSync } from 'fflate';\nimport { gunzip } from 'fflate';" },
      { path: 'worker/testing/fake.ts', source: "import { fake } from 'some-test-helper';" },
    ];
    expect(findReadmeProblems({ folder: 'worker', readme, files, topFolders: ['worker', 'vm', 'protocol', 'storage'] })).toEqual([
      'worker/README.md does not name worker/tools/bash.ts',
      'worker/README.md does not name worker/checkpoints/store.ts',
      'worker/README.md does not name worker/testing/fake.ts',
      'worker/README.md:8 names `gone.ts`, which is not a file of worker/',
      'worker/README.md:10 names `bench*.ts`, which matches no file of worker/',
      'worker/README.md:12 names `take.ts`, which is not a file of worker/',
      'worker/README.md "May import" does not allow node: (worker/tools/bash.ts:1 imports node:fs/promises)',
      'worker/README.md "May import" does not allow storage/ (worker/checkpoints/record.ts:1 imports ../../storage/hash.ts)',
      'worker/README.md "May import" does not allow fflate (worker/checkpoints/store.ts:1 imports fflate)',
    ]);
  });

  it('reads "May import" as a paragraph or as a section under its heading', () => {
    expect(mayImport('# x\n\nMay import: `zod`,\n`yaml`.\n\nMore.')).toBe('May import: `zod`,\n`yaml`.');
    expect(mayImport('# x\n\n## May import\n\n- `zod`\n\n- `yaml`\n\n## Files')).toBe('## May import\n\n- `zod`\n\n- `yaml`\n');
    expect(mayImport('# x\n\nImports nothing.')).toBeUndefined();
  });
});
