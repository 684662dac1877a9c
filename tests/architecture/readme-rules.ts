// What a folder's README must say about the folder, checked by readmes.test.ts: every file named,
// no file named that is not there, and every package the folder's code imports allowed.
//
// The rules, so a README can be written to them:
// - A file is named when its path relative to the folder is written in backticks (`canvas/Canvas.tsx`),
//   or a glob in backticks matches that path (`processor*.ts`, `test/*`). A bullet or table row that
//   opens with a sub-folder in backticks (`- \`checkpoints/\` — \`record.ts\` is…`) names the files
//   after it relative to that sub-folder too. A folder name alone (`handlers/`) names no file.
// - Tests need no line: `*.test.ts(x)` (which covers `.browser.test.ts`, `.property.test.ts` and
//   `.boot.test.ts`), vitest's `__snapshots__/` and `__screenshots__/`, and the README itself are
//   skipped. Everything else counts: code, a tool's `.md` description, a skill, a fixture, a config.
// - A name in backticks that ends like code (.ts, .tsx, .mts, .mjs, .js, .css, .py, .sh) claims the
//   file is here: it must exist, in the folder or in the sub-folder its line opens with (`vm/x.ts`
//   in vm/README reads as `x.ts`); a glob ending so must match a file. Not claims: URLs, absolute
//   paths, build outputs (`dist/`), paths in another top folder (`worker/trust.ts` in vm/README),
//   names that are not code (stack files such as `stack.json` or `SKILL.md`), and the package
//   names of "May import" (`chart.js`).
// - Imports: every package a product file (not a test, not under `test/` or `testing/`) imports is
//   written in the "May import" paragraph by its package name (`@modelcontextprotocol/sdk/client/index.js`
//   is `@modelcontextprotocol/sdk`; `x?url` is `x`). Node's builtins need `node:` written there.
//   A relative import into another top folder needs that folder written there (`storage/`), and
//   one of a file at the top its name (`package.json`); which way such imports may point is
//   import-rules.ts's.
import picomatch from 'picomatch';
import { listImports, resolveSpecifier, topFolder, type SourceFile } from './import-rules.ts';

export interface FolderUnderTest {
  /** The folder, relative to the repository, e.g. `worker` or `cloudflare-proxy`. */
  folder: string;
  /** Its README's text. */
  readme: string;
  /** Every file under it, repository-relative; `source` is read for code files only. */
  files: SourceFile[];
  /** The repository's top-level folders, to tell a name of another folder (`vm/disk.ts`) apart. */
  topFolders: string[];
}

const CODE_NAME = /\.(tsx?|mts|mjs|js|css|py|sh)$/;
const CODE_FILE = /\.(tsx?|mts|mjs|js)$/;
const SKIPPED = (rel: string) => /\.test\.tsx?$/.test(rel) || /(^|\/)__(snapshots|screenshots)__\//.test(rel) || rel === 'README.md';
const NOT_PRODUCT = (rel: string) => SKIPPED(rel) || /(^|\/)(test|testing)\//.test(rel) || rel.endsWith('.d.ts') || rel.endsWith('.d.mts');

interface Name {
  text: string;
  /** The sub-folder the line it is written on opens with (`checkpoints/`), or ''. */
  base: string;
  line: number;
}

/** Every path-like name in backticks, each with the sub-folder its bullet or row opens with. */
export function namesIn(readme: string, subfolders: Set<string>): Name[] {
  const names: Name[] = [];
  let base = '';
  let inFence = false;
  readme.split('\n').forEach((line, index) => {
    if (line.trimStart().startsWith('```')) {
      inFence = !inFence;
      return;
    }
    if (inFence) return;
    const opens = /^\s*(?:[-*]|\|)\s+/.test(line) || /^\s*$/.test(line) || line.startsWith('#');
    if (opens) {
      const first = /^\s*(?:[-*]|\|)\s+`([^`\s]+\/)`/.exec(line)?.[1];
      base = first && subfolders.has(first) ? first : '';
    }
    for (const [, text] of line.matchAll(/`([^`\s]+)`/g)) {
      if (/^[\w.@*{},/[\]-]+$/.test(text!)) names.push({ text: text!, base, line: index + 1 });
    }
  });
  return names;
}

const isGlob = (text: string) => /[*{]/.test(text);

/** Every problem with the README of one folder; empty means it tells the truth. */
export function findReadmeProblems(target: FolderUnderTest): string[] {
  const { folder, readme, files, topFolders } = target;
  const where = `${folder}/README.md`;
  const rel = (path: string) => path.slice(folder.length + 1);
  const all = files.map((file) => rel(file.path));
  const subfolders = new Set(all.flatMap((path) => path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/') + '/')));
  const names = namesIn(readme, subfolders);
  const candidates = (name: Name) => {
    const text = name.text.startsWith(`${folder}/`) ? rel(name.text) : name.text;
    return name.base && !text.startsWith(name.base) ? [text, name.base + text] : [text];
  };
  const exact = new Set(names.flatMap(candidates));
  const globs = names.filter((name) => isGlob(name.text)).map((name) => ({ name, match: candidates(name).map((glob) => picomatch(glob, { dot: true })) }));
  const problems: string[] = [];

  for (const path of all) {
    if (SKIPPED(path)) continue;
    if (exact.has(path) || globs.some((glob) => glob.match.some((match) => match(path)))) continue;
    problems.push(`${where} does not name ${folder}/${path}`);
  }

  const otherFolder = (text: string) => topFolders.some((top) => top !== folder && text.startsWith(`${top}/`)) && !subfolders.has(text.split('/')[0] + '/');
  // Package names (`chart.js`) are not files.
  const packages = mayImportLines(readme) ?? [0, 0];
  for (const name of names) {
    if (name.line > packages[0] && name.line <= packages[1]) continue;
    if (name.text.startsWith('/') || name.text.startsWith('dist/') || name.text.includes('://') || otherFolder(name.text)) continue;
    if (isGlob(name.text)) {
      const glob = globs.find((g) => g.name === name)!;
      if (CODE_NAME.test(name.text) && !all.some((path) => glob.match.some((match) => match(path)))) {
        problems.push(`${where}:${name.line} names \`${name.text}\`, which matches no file of ${folder}/`);
      }
    } else if (CODE_NAME.test(name.text) && !candidates(name).some((path) => all.includes(path))) {
      problems.push(`${where}:${name.line} names \`${name.text}\`, which is not a file of ${folder}/`);
    }
  }

  const allowed = mayImport(readme);
  if (allowed === undefined) {
    problems.push(`${where} has no "May import" paragraph`);
    return problems;
  }
  const reported = new Set<string>();
  for (const file of files) {
    if (!CODE_FILE.test(file.path) || NOT_PRODUCT(rel(file.path))) continue;
    for (const ref of listImports(file)) {
      const needs = needed(file.path, ref.specifier, folder);
      if (!needs || mentions(allowed, needs) || reported.has(needs)) continue;
      reported.add(needs);
      problems.push(`${where} "May import" does not allow ${needs} (${file.path}:${ref.line} imports ${ref.specifier})`);
    }
  }
  return problems;
}

/** What an import needs named: a package, `node:`, another top folder (`storage/`), or nothing. */
function needed(from: string, specifier: string, folder: string): string | undefined {
  if (specifier.startsWith('.')) {
    const target = resolveSpecifier(from, specifier);
    if (target.startsWith(`${folder}/`)) return undefined;
    return target.includes('/') ? `${topFolder(target)}/` : target;
  }
  if (specifier.startsWith('node:')) return 'node:';
  const bare = specifier.split('?')[0]!;
  if (bare.startsWith('virtual:')) return bare;
  const parts = bare.split('/');
  return bare.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether a name stands in the text as itself (`zod`, not the `zod` in `zod-jitless`). */
function mentions(text: string, name: string): boolean {
  const tail = name.endsWith('/') || name.endsWith(':') ? '' : '(?![\\w/-])';
  return new RegExp(`(?<![\\w@/.-])${escape(name)}${tail}`).test(text);
}

/** The "May import" paragraph (or section, under a heading), or undefined when there is none. */
export function mayImport(readme: string): string | undefined {
  const range = mayImportLines(readme);
  return range && readme.split('\n').slice(range[0], range[1]).join('\n');
}

/** Where that paragraph is: its first line and the line after its last (0-based). */
function mayImportLines(readme: string): [number, number] | undefined {
  const lines = readme.split('\n');
  const start = lines.findIndex((line) => /^(#+\s*)?May import\b/i.test(line.trim()));
  if (start < 0) return undefined;
  const heading = lines[start]!.startsWith('#');
  let end = start + 1;
  while (end < lines.length && !lines[end]!.startsWith('#') && (heading || lines[end]!.trim() !== '')) end++;
  return [start, end];
}
