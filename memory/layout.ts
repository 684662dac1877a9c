// The layout of one stack's folder, as data: `.os/` is system space (memory files, databases,
// skills, config), the rest is user space — the same folders the VM sees under /workspace.

/** Bumped when the folder layout changes; written to `.os/VERSION`. */
export const LAYOUT_VERSION = 1;

export const SYSTEM_DIR = '.os';

export const STACK_LAYOUT = {
  system: SYSTEM_DIR,
  /** The six memory files and both databases. */
  memory: `${SYSTEM_DIR}/memory`,
  /** `<slug>/SKILL.md` per skill. */
  skills: `${SYSTEM_DIR}/skills`,
  config: `${SYSTEM_DIR}/config`,
  version: `${SYSTEM_DIR}/VERSION`,
  transcriptDb: `${SYSTEM_DIR}/memory/transcript.db`,
  memoryDb: `${SYSTEM_DIR}/memory/memory.db`,
  /** User space: uploads, OCR text, extraction outputs, files the agent made. */
  userSpace: ['documents', 'ocr', 'extractions', 'artifacts'],
} as const;

export type UserSpaceDir = (typeof STACK_LAYOUT.userSpace)[number];

/** Every folder a new stack gets, parents first. */
export const STACK_DIRECTORIES: readonly string[] = [
  STACK_LAYOUT.system,
  STACK_LAYOUT.memory,
  STACK_LAYOUT.skills,
  STACK_LAYOUT.config,
  ...STACK_LAYOUT.userSpace,
];

/** Stacks live side by side under this OPFS folder (one folder per stack id). */
export const STACKS_DIR = 'stacks';

/** A stack id becomes a folder name, so it is kept to a safe alphabet. */
export function checkStackId(stackId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/.test(stackId)) {
    throw new Error(`"${stackId}" is not a valid stack id (letters, digits, - and _, at most 100).`);
  }
  return stackId;
}

/** The path of a stack's database as the OPFS VFS sees it: from the origin's OPFS root. */
export function opfsDatabasePath(stackId: string, database: 'transcript' | 'memory'): string {
  const file = database === 'transcript' ? STACK_LAYOUT.transcriptDb : STACK_LAYOUT.memoryDb;
  return `/${STACKS_DIR}/${checkStackId(stackId)}/${file}`;
}

/** True for `.os` and anything under it: system space the agent's file tools must not write. */
export function isSystemPath(path: string): boolean {
  const first = normalizeStackPath(path).split('/')[0];
  return first === SYSTEM_DIR;
}

/**
 * A stack-relative path with `/` separators, no leading slash, no `.` or `..` segments.
 * Throws on a path that would leave the stack's folder.
 */
export function normalizeStackPath(path: string): string {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') throw new Error(`Path "${path}" leaves the stack's folder.`);
    parts.push(part);
  }
  return parts.join('/');
}

/** Where an export's consistent copies of a stack's databases go (`VACUUM INTO`), from the OPFS root. */
export function opfsSnapshotPath(stackId: string, database: 'transcript' | 'memory'): string {
  return `/${STACKS_DIR}/${checkStackId(stackId)}/${SYSTEM_DIR}/snapshot/${database}.db`;
}
