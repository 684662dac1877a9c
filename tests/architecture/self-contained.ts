// The repository stands on its own: no tracked file reaches outside it by a relative path (a
// sibling folder's fixtures, a parent checkout), so a clone with nothing beside it runs its tests.
import { posix } from 'node:path';

/**
 * A path that starts with `../`, as written in source, configs, scripts or docs: at the start of
 * a line, a string, a link or an argument. `a/../../b` in the middle of a path is a test's input
 * for a path guard, not a reference.
 */
const RELATIVE_PATH = /(?<=^|[\s'"`(=:,[])(?:\.\.\/)+[\w.@-]*(?:\/[\w.@-]+)*/g;

export interface OutsideReference {
  path: string;
  line: number;
  reference: string;
}

/**
 * Every relative path in `source` (a file at repository path `path`) that resolves above the
 * repository root. Template placeholders stop a path where they begin, which errs on the side
 * of reporting it.
 */
export function findOutsideReferences(path: string, source: string): OutsideReference[] {
  const found: OutsideReference[] = [];
  const dir = posix.dirname(path);
  const lines = source.split('\n');
  lines.forEach((text, index) => {
    for (const match of text.matchAll(RELATIVE_PATH)) {
      const resolved = posix.normalize(posix.join(dir, match[0]));
      if (resolved === '..' || resolved.startsWith('../')) found.push({ path, line: index + 1, reference: match[0] });
    }
  });
  return found;
}
