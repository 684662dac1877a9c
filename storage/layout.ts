// Where things are in the origin's private file system, as data: the folders at its root, and the
// layout of one stack's folder (`.os/` is system space, the rest the user's, the computer's
// /workspace). Every part of the app that names one of these names it from here.

/** Folders at the OPFS root. */
export const OPFS_ROOT = {
  /** One folder per stack, named by its id. */
  stacks: 'stacks',
  /** This browser's own JSON state, shared by its stacks (the proxies' device tokens). */
  device: 'device',
  /** Kiosk reset points, one folder per stack id (never listed as stacks). */
  kiosk: 'kiosk',
  /** The computer's image chunks, shared by every stack: `base/<sha256>`. */
  base: 'base',
} as const;

/** Stacks live side by side under this OPFS folder (one folder per stack id). */
export const STACKS_DIR = OPFS_ROOT.stacks;

export const SYSTEM_DIR = '.os';

/** The folders and files of one stack's folder, relative to it. */
export const STACK_PATHS = {
  system: SYSTEM_DIR,
  /** The six memory files and both databases. */
  memory: `${SYSTEM_DIR}/memory`,
  /** `<slug>/SKILL.md` per skill. */
  skills: `${SYSTEM_DIR}/skills`,
  /** The stack's small JSON files: its record (`stack.json`), settings, rules, canvas, trust... */
  config: `${SYSTEM_DIR}/config`,
  /** The computer's files: disk overlay and map, saved state, `machine.json`, `image.json`. */
  vm: `${SYSTEM_DIR}/vm`,
  /** Checkpoints: records and packs (never copied with the stack). */
  checkpoints: `${SYSTEM_DIR}/checkpoints`,
  /** Consistent copies of the databases an export makes as the stack closes. */
  snapshot: `${SYSTEM_DIR}/snapshot`,
  version: `${SYSTEM_DIR}/VERSION`,
  transcriptDb: `${SYSTEM_DIR}/memory/transcript.db`,
  memoryDb: `${SYSTEM_DIR}/memory/memory.db`,
  /** User space: uploads, OCR text, extraction outputs, files the agent made. */
  userSpace: ['documents', 'ocr', 'extractions', 'artifacts'],
} as const;

/** A stack id is a folder name: a letter or digit, then letters, digits, `-` and `_`, at most 64 in all (app/stacks/stacks.ts agrees). */
const STACK_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function isStackId(stackId: string): boolean {
  return STACK_ID.test(stackId);
}

/** Returns `stackId` when it is one; throws otherwise (it would name another folder). */
export function checkStackId(stackId: string): string {
  if (!isStackId(stackId)) throw new Error(`"${stackId}" is not a valid stack id (letters, digits, - and _, at most 64).`);
  return stackId;
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

/** True for `.os` and anything under it: system space the agent's file tools must not write. */
export function isSystemPath(path: string): boolean {
  return normalizeStackPath(path).split('/')[0] === SYSTEM_DIR;
}
