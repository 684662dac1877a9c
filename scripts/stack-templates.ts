// Packs the shipped stack templates (templates/<slug>/) into `.stack` files of the stack-file
// format, each with `template` in its manifest, and the index the app lists them from. Run by the
// build (vite.config.ts); the same code checks them in scripts/stack-templates.test.ts.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { FORMAT, FORMAT_VERSION, MANIFEST_NAME, STACK_PREFIX, type StackManifest } from '../worker/stack-file/format.ts';
import type { TemplateInfo } from '../protocol/stacks-api.ts';

export const TEMPLATES_DIR = join(import.meta.dirname, '..', 'templates');

/** The order the app lists them in. */
const ORDER = ['invoice-inbox', 'research-notebook', 'blank'];

export interface BuiltTemplate {
  info: TemplateInfo;
  bytes: Uint8Array;
}

/** Every template folder as a `.stack` file, in the listing's order. */
export function buildTemplates(appVersion: string, dir = TEMPLATES_DIR): BuiltTemplate[] {
  const slugs = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return slugs.map((slug) => buildTemplate(join(dir, slug), slug, appVersion));
}

function rank(slug: string): number {
  const at = ORDER.indexOf(slug);
  return at < 0 ? ORDER.length : at;
}

function buildTemplate(folder: string, slug: string, appVersion: string): BuiltTemplate {
  const about = JSON.parse(readFileSync(join(folder, 'template.json'), 'utf8')) as { name?: unknown; description?: unknown };
  if (typeof about.name !== 'string' || typeof about.description !== 'string') throw new Error(`templates/${slug}/template.json needs a name and a description`);
  const stackDir = join(folder, 'stack');
  const files = filesUnder(stackDir).map((path) => ({ path: `${STACK_PREFIX}${relative(stackDir, path).split(sep).join('/')}`, bytes: new Uint8Array(readFileSync(path)) }));
  const manifest: StackManifest = {
    format: FORMAT,
    format_version: FORMAT_VERSION,
    app_version: appVersion,
    // The same bytes from every build of the same sources.
    created_at: 0,
    stack: { name: about.name },
    image: { recipe: null },
    includes_image: false,
    template: { description: about.description },
    entries: files.map(({ path, bytes }) => ({ path, size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') })),
  };
  // The manifest first: an importer reads it before anything else.
  const zip: Zippable = { [MANIFEST_NAME]: new TextEncoder().encode(JSON.stringify(manifest, null, 1)) };
  for (const { path, bytes } of files) zip[path] = bytes;
  const bytes = zipSync(zip, { level: 6, mtime: new Date('2026-01-01T00:00:00Z') });
  return { info: { slug, name: about.name, description: about.description, file: `templates/${slug}.stack`, bytes: bytes.byteLength }, bytes };
}

function filesUnder(dir: string): string[] {
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) return [];
    entries = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
