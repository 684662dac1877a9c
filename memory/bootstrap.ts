// Gives a stack its folders, `.os/VERSION` and the six memory files. Idempotent: an existing
// stack keeps its files (memory files are never overwritten), only what is missing is created.
import { LAYOUT_VERSION, STACK_DIRECTORIES, STACK_LAYOUT } from './layout.ts';
import { MEMORY_FILES } from './memory-files.ts';
import type { StackFiles } from './stack-files.ts';
import { MEMORY_TEMPLATES } from './templates.ts';

export interface BootstrapReport {
  /** Files written by this call (stack-relative paths). */
  created: string[];
  /** The layout version found before this call; 0 for a new stack. */
  previousVersion: number;
}

export class LayoutTooNewError extends Error {
  constructor(readonly found: number) {
    super(
      `This stack's folder has layout version ${found}, but this version of Stackdocs understands up to ${LAYOUT_VERSION}. ` +
        'Update the app to open it.',
    );
    this.name = 'LayoutTooNewError';
  }
}

export async function bootstrapStack(files: StackFiles): Promise<BootstrapReport> {
  const previousVersion = await readLayoutVersion(files);
  if (previousVersion > LAYOUT_VERSION) throw new LayoutTooNewError(previousVersion);
  // Side by side: each step is a few round trips to the browser's storage, on every open.
  await Promise.all(STACK_DIRECTORIES.map((dir) => files.makeDir(dir)));
  const made = await Promise.all(
    MEMORY_FILES.map(async ({ name }) => {
      const path = `${STACK_LAYOUT.memory}/${name}`;
      if ((await files.readText(path)) !== undefined) return null;
      await files.writeText(path, MEMORY_TEMPLATES[name]);
      return path;
    }),
  );
  const created = made.filter((path): path is string => path !== null);
  // Written last: a stack whose bootstrap was interrupted is completed on the next open.
  if (previousVersion !== LAYOUT_VERSION) {
    await files.writeText(STACK_LAYOUT.version, `${LAYOUT_VERSION}\n`);
    created.push(STACK_LAYOUT.version);
  }
  return { created, previousVersion };
}

/**
 * 0 when the stack has no `.os/VERSION` yet. An empty one counts as none: OPFS creates a file
 * empty before a writer's content lands, so another worker bootstrapping the same stack at
 * this moment (or one killed mid-write) leaves exactly that.
 */
export async function readLayoutVersion(files: StackFiles): Promise<number> {
  const text = await files.readText(STACK_LAYOUT.version);
  if (text === undefined || text.trim() === '') return 0;
  const version = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(version) || version < 0) throw new Error(`.os/VERSION holds "${text.trim()}", not a version number.`);
  return version;
}
