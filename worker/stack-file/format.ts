// The `.stack` file's format, written down before it is written out (docs/stack-file.md): a zip
// whose first entry is `manifest.json`, then `layout.json` (the canvas layout) and the stack's
// files under `stack/`. The manifest names every other entry with its size and sha256; an
// importer reads it first and refuses, before writing anything, a file it cannot take whole.
import { z } from 'zod';
import { noRoomMessage } from '../storage-full.ts';
import type { StorageEstimateLike } from '../../storage/quota.ts';
import { formatBytes } from '../../protocol/wording.ts';

export const FORMAT = 'stackdocs-stack';
/** 2: entries packed with zstd (zip method 93); 1: deflated. Both are read. */
export const FORMAT_VERSION = 2;
export const READ_VERSIONS = [1, 2];
export const MANIFEST_NAME = 'manifest.json';
/** Format 2's last entry: every other entry's sha256, known only once the entry is written. */
export const CHECKSUMS_NAME = 'checksums.json';
export const LAYOUT_NAME = 'layout.json';
export const STACK_PREFIX = 'stack/';
/** The system image, when the file includes it (image-entries.ts). */
export const IMAGE_DIR_PREFIX = 'image/';
/** A manifest is small text; anything larger is not one. */
export const MANIFEST_MAX_BYTES = 8 * 1024 * 1024;
/** The canvas layout is a small JSON object kept by the page. */
export const LAYOUT_MAX_BYTES = 1024 * 1024;
/** A name's longest segment and whole path, in UTF-8 bytes: what every file system the stack lands on takes. */
export const SEGMENT_MAX_BYTES = 255;
export const PATH_MAX_BYTES = 1024;
/** The computer's own files: they belong to the system image the manifest names. */
export const VM_PREFIX = 'stack/.os/vm/';
/**
 * Characters that reorder how a name is shown (U+202A-202E embeddings and overrides, U+2066-2069
 * isolates, U+200E/F marks, U+061C): `invoice\u202Efdp.exe` reads as "invoiceexe.pdf".
 */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;
const utf8 = new TextEncoder();

/**
 * Files of a stack that never leave it: its own record (the importer writes a new one), its checkpoints, the
 * secrets (the user's API key), its trust record (what its owner allowed it to run, given in this
 * browser and never by a file), and what the databases and the export leave beside themselves.
 * The databases travel as consistent copies (`VACUUM INTO`), never as the live files.
 */
export const SNAPSHOT_DIR = '.os/snapshot';
export const NEVER_EXPORTED = [/^\.os\/config\/stack\.json$/, /^\.os\/config\/secrets\.json/, /^\.os\/config\/trust\.json$/, /-journal$/, /^\.os\/snapshot(\/|$)/, /^\.os\/memory\/(transcript|memory)\.db$/, /^\.os\/checkpoints(\/|$)/];

export class StackFileError extends Error {
  override readonly name = 'StackFileError';
  constructor(
    /** `too_large`: it fits, but is over the ceiling the user is asked about (checks.allowLarge). */
    readonly code: 'bad_file' | 'format_version' | 'image' | 'storage' | 'too_large' | 'cancelled' | 'damaged',
    message: string,
  ) {
    super(message);
  }
}

const SHA256 = /^[0-9a-f]{64}$/;

const entrySchema = z.object({
  /** Checked in bytes by pathProblem, which says why; this only keeps a manifest from holding megabytes in one name. */
  path: z.string().min(1).max(4 * PATH_MAX_BYTES),
  size: z.number().int().nonnegative(),
  /** In the manifest (format 1, templates) or in `checksums.json` (format 2's exports). */
  sha256: z.string().regex(SHA256).optional(),
});

const manifestSchema = z.object({
  format: z.literal(FORMAT),
  format_version: z.number().int().positive(),
  app_version: z.string().max(100),
  created_at: z.number(),
  stack: z.object({ name: z.string().min(1).max(200) }),
  /** The system image the stack's computer disk was made over (its recipe hash); null: the computer never started. */
  image: z.object({ recipe: z.string().regex(/^[0-9a-f]{8,64}$/).nullable() }),
  /** Whether the file carries the system image itself (`image/`): it then opens in an app with another image. */
  includes_image: z.boolean(),
  /** A template (template.ts): a stack's makings without its history; what it is for, in a line. */
  template: z.object({ description: z.string().max(500) }).optional(),
  entries: z.array(entrySchema).max(200_000),
});

export type ManifestEntry = z.infer<typeof entrySchema>;
export type StackManifest = z.infer<typeof manifestSchema>;

/**
 * A zip entry's name as a path inside the file: `manifest.json`, `layout.json` or `stack/<path>`,
 * with `/` separators, no `.` or `..` segment, not absolute, nothing empty. Returns why not, or null.
 */
export function pathProblem(path: string): string | null {
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) return `"${path}" is an absolute path`;
  if (path.includes('\\')) return `"${path}" uses "\\" in a path`;
  if (/[\u0000-\u001f]/.test(path)) return `"${path.replace(/[\u0000-\u001f]/g, '?')}" has a control character`;
  if (BIDI_CONTROLS.test(path)) return `"${path.replace(new RegExp(BIDI_CONTROLS, 'g'), '?')}" has a character that changes the direction text is shown in, so its name would not read as what it is`;
  if (path !== path.normalize('NFC')) return `"${path}" is not in Unicode's composed form (NFC): the same name could then be two different files`;
  if (utf8.encode(path).byteLength > PATH_MAX_BYTES) return `"${path.slice(0, 60)}…" is longer than ${PATH_MAX_BYTES} bytes`;
  const parts = path.split('/');
  if (parts.some((part) => part === '..')) return `"${path}" leaves the stack (a path with "..")`;
  if (parts.some((part) => part === '' || part === '.')) return `"${path}" is not a plain path`;
  const long = parts.find((part) => utf8.encode(part).byteLength > SEGMENT_MAX_BYTES);
  if (long !== undefined) return `"${path.slice(0, 60)}…" has a name longer than ${SEGMENT_MAX_BYTES} bytes`;
  if (path === MANIFEST_NAME || path === LAYOUT_NAME) return null;
  if (path.startsWith(IMAGE_DIR_PREFIX)) return /^image\/[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/.test(path) ? null : `"${path}" is not a file of a system image`;
  if (!path.startsWith(STACK_PREFIX) || parts.length < 2) return `"${path}" is outside the stack`;
  const inStack = path.slice(STACK_PREFIX.length);
  if (NEVER_EXPORTED.some((rule) => rule.test(inStack)) && !isDatabaseCopy(inStack)) return `"${path}" is a file a stack never takes from outside`;
  return null;
}

/** The databases are carried as their consistent copies, under their own names. */
function isDatabaseCopy(inStack: string): boolean {
  return /^\.os\/memory\/(transcript|memory)\.db$/.test(inStack);
}

export interface ManifestChecks {
  /** The recipe hash of this app's system image; null when the app has none. */
  appImage: string | null;
  estimate: StorageEstimateLike | undefined;
  /** The user said yes to a stack over the import ceiling (importCeiling). */
  allowLarge?: boolean;
}

/** The most an import writes without asking, whatever the browser grants. */
export const IMPORT_CEILING_BYTES = 4_000_000_000;

/**
 * The most a stack file may unpack to before the user is asked: half the room the browser still
 * grants the site, at most 4 GB (the whole 4 GB when the browser does not say). A file can
 * declare any size; this keeps one from filling the disk unasked.
 */
export function importCeiling(estimate: StorageEstimateLike | undefined): number {
  const { usage, quota } = estimate ?? {};
  if (typeof usage !== 'number' || typeof quota !== 'number' || !(quota > 0)) return IMPORT_CEILING_BYTES;
  return Math.min(IMPORT_CEILING_BYTES, Math.floor(Math.max(0, quota - usage) / 2));
}

/**
 * Parses and checks a manifest before anything is written: the format and its version, every
 * path, no entry twice, the system image, and that everything fits in the free room. Throws
 * StackFileError with a message for the user.
 */
export function checkManifest(text: string, checks: ManifestChecks): StackManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new StackFileError('bad_file', 'This is not a Stackdocs stack file: its manifest is not readable.');
  }
  const head = raw as { format?: unknown; format_version?: unknown } | null;
  if (head?.format !== FORMAT) throw new StackFileError('bad_file', 'This is not a Stackdocs stack file: its manifest does not say "stackdocs-stack".');
  if (typeof head.format_version === 'number' && !READ_VERSIONS.includes(head.format_version)) {
    throw new StackFileError(
      'format_version',
      `This stack file is format version ${head.format_version}; this version of Stackdocs reads format versions ${READ_VERSIONS.join(' and ')} only. ${head.format_version > FORMAT_VERSION ? 'Open it in a newer Stackdocs.' : ''}`.trim(),
    );
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StackFileError('bad_file', `This stack file's manifest is damaged (${issue ? `${issue.path.join('.') || 'manifest'}: ${issue.message}` : 'unreadable'}).`);
  }
  const manifest = parsed.data;
  for (const entry of manifest.entries) {
    const problem = entry.path === MANIFEST_NAME || entry.path === CHECKSUMS_NAME ? `"${entry.path}" cannot be listed` : pathProblem(entry.path);
    if (problem) throw new StackFileError('bad_file', `This stack file is refused: ${problem}.`);
  }
  const clash = nameClash(manifest.entries.map((entry) => entry.path));
  if (clash) throw new StackFileError('bad_file', `This stack file is refused: ${clash}.`);
  const layout = manifest.entries.find((entry) => entry.path === LAYOUT_NAME);
  if (layout && layout.size > LAYOUT_MAX_BYTES) throw new StackFileError('bad_file', `This stack file is refused: its layout claims ${layout.size} bytes.`);
  const recipe = manifest.image.recipe;
  const imageEntries = manifest.entries.filter((entry) => entry.path.startsWith(IMAGE_DIR_PREFIX));
  if (manifest.includes_image) {
    if (recipe === null || !manifest.entries.some((entry) => entry.path === `${IMAGE_DIR_PREFIX}manifest.json`)) throw new StackFileError('bad_file', 'This stack file says it includes its system image, but it has none.');
  } else if (imageEntries.length) {
    throw new StackFileError('bad_file', `This stack file is refused: "${imageEntries[0]!.path}" is a system image's file in a file that includes none.`);
  }
  if (recipe !== null && recipe !== checks.appImage && !manifest.includes_image) {
    throw new StackFileError(
      'image',
      checks.appImage === null
        ? `This stack's computer runs on system image ${recipe}, and this Stackdocs has no system image. Open the file in a Stackdocs built with image ${recipe}.`
        : `This stack's computer runs on system image ${recipe}, but this Stackdocs has system image ${checks.appImage}, and the file does not include its image. Open it in a Stackdocs built with image ${recipe}.`,
    );
  }
  const vmFile = manifest.entries.find((entry) => entry.path.startsWith(VM_PREFIX));
  if (recipe === null && vmFile) {
    throw new StackFileError('bad_file', `This stack file is refused: it says its computer never started (no system image), yet it carries the computer's files ("${vmFile.path}").`);
  }
  const needed = totalSize(manifest);
  const refusal = noRoomMessage('The stack was not imported', needed, checks.estimate);
  if (refusal) throw new StackFileError('storage', refusal);
  const ceiling = importCeiling(checks.estimate);
  if (needed > ceiling && !checks.allowLarge) {
    throw new StackFileError(
      'too_large',
      `This stack unpacks to ${formatBytes(needed)}, more than a stack file may take without asking (${formatBytes(ceiling)}: half the room this browser has left for Stackdocs, at most ${formatBytes(IMPORT_CEILING_BYTES)}). Nothing was written. Import it anyway only if you expected a stack this large.`,
    );
  }
  return manifest;
}

/**
 * Why these paths cannot all be files of one folder, or null: one listed twice, two that differ
 * only by case (one would overwrite the other where names ignore case, and they look alike), or a
 * file that another path needs as a folder.
 */
export function nameClash(paths: readonly string[]): string | null {
  const files = new Set<string>();
  const folders = new Set<string>();
  const byFold = new Map<string, string>();
  const folded = (name: string) => name.toLowerCase();
  for (const path of paths) {
    if (files.has(path)) return `"${path}" is listed twice`;
    files.add(path);
  }
  for (const path of paths) {
    const parts = path.split('/');
    for (let end = 1; end <= parts.length; end++) {
      const name = parts.slice(0, end).join('/');
      if (end < parts.length) {
        if (files.has(name)) return `"${name}" is both a file and the folder of "${path}"`;
        if (folders.has(name)) continue;
        folders.add(name);
      }
      const other = byFold.get(folded(name));
      if (other !== undefined && other !== name) return `"${other}" and "${name}" differ only by case`;
      byFold.set(folded(name), name);
    }
  }
  return null;
}

/** Max bytes of `checksums.json`: a line per entry. */
export const CHECKSUMS_MAX_BYTES = 200_000 * 100;

/**
 * The manifest with every entry's sha256: from the manifest, else from `checksums.json` (its
 * text, or null when the file has none). Throws StackFileError naming the first entry without one.
 */
export function withChecksums(manifest: StackManifest, text: string | null): StackManifest & { entries: Required<ManifestEntry>[] } {
  let sums: Record<string, unknown> = {};
  if (text !== null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const listed = (parsed as { sha256?: unknown } | null)?.sha256;
    if (typeof listed !== 'object' || listed === null || Array.isArray(listed)) throw new StackFileError('damaged', 'This stack file is damaged: its list of checksums is not readable.');
    sums = listed as Record<string, unknown>;
  }
  const entries = manifest.entries.map((entry) => {
    const sha256 = entry.sha256 ?? (Object.hasOwn(sums, entry.path) ? sums[entry.path] : undefined);
    if (typeof sha256 !== 'string' || !SHA256.test(sha256)) {
      throw new StackFileError('damaged', `This stack file is damaged: "${entry.path}" has no checksum${text === null ? ' (its list of checksums, at its end, is missing)' : ''}.`);
    }
    return { ...entry, sha256 };
  });
  return { ...manifest, entries };
}

export function totalSize(manifest: Pick<StackManifest, 'entries'>): number {
  return manifest.entries.reduce((sum, entry) => sum + entry.size, 0);
}

/** The app's image recipe from where the build serves it (`vm/<recipe>/`); null without one. */
export function recipeOfImageBase(base: string | null): string | null {
  return base?.match(/vm\/([0-9a-f]{8,64})\/?$/)?.[1] ?? null;
}
