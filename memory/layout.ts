// The layout of one stack's folder, as data: `.os/` is system space (memory files, databases,
// skills, config), the rest is user space — the same folders the VM sees under /workspace. The
// names are storage/'s; what a new stack is made of and where its databases are is memory/'s.
import { checkStackId, STACK_PATHS, STACKS_DIR, SYSTEM_DIR } from '../storage/layout.ts';

/** Bumped when the folder layout changes; written to `.os/VERSION`. */
export const LAYOUT_VERSION = 1;

/** The stack folder's own names (storage/layout.ts); memory/ adds what a new stack is made of. */
export const STACK_LAYOUT = STACK_PATHS;

export type UserSpaceDir = (typeof STACK_LAYOUT.userSpace)[number];

/** Every folder a new stack gets, parents first. */
export const STACK_DIRECTORIES: readonly string[] = [
  STACK_LAYOUT.system,
  STACK_LAYOUT.memory,
  STACK_LAYOUT.skills,
  STACK_LAYOUT.config,
  ...STACK_LAYOUT.userSpace,
];

/** The path of a stack's database as the OPFS VFS sees it: from the origin's OPFS root. */
export function opfsDatabasePath(stackId: string, database: 'transcript' | 'memory'): string {
  const file = database === 'transcript' ? STACK_LAYOUT.transcriptDb : STACK_LAYOUT.memoryDb;
  return `/${STACKS_DIR}/${checkStackId(stackId)}/${file}`;
}

/** Where an export's consistent copies of a stack's databases go (`VACUUM INTO`), from the OPFS root. */
export function opfsSnapshotPath(stackId: string, database: 'transcript' | 'memory'): string {
  return `/${STACKS_DIR}/${checkStackId(stackId)}/${SYSTEM_DIR}/snapshot/${database}.db`;
}
