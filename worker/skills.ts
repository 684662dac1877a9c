// Skills: procedures the agent can be taught once and use again — a folder with a SKILL.md whose
// frontmatter names it and says in one line when it helps (and which tools it uses). The system
// prompt lists skills by name and description only; `load_skill` reads one whole when it is
// relevant. Two ship with the app (worker/skills/); the user installs more (Settings → Skills,
// from a folder or a SKILL.md), kept in the stack under `.os/skills/<name>/`. A skill never
// changes the permission rules: the tools it names are shown, and ask as they always do.
import type { SkillInfo } from '../protocol/skills.ts';
import invoiceToTable from './skills/invoice-to-table/SKILL.md?raw';
import cleanCsv from './skills/clean-csv/SKILL.md?raw';

export const SKILLS_DIR = '.os/skills';
const SKILL_FILE = 'SKILL.md';
const MAX_FILES = 50;
const MAX_BYTES = 1_000_000;
const MAX_DESCRIPTION = 1024;

export class SkillError extends Error {
  override readonly name = 'SkillError';
}

export interface Skill extends SkillInfo {
  /** The whole SKILL.md. */
  text: string;
  /** Other files of the skill, by path inside its folder. */
  files: Map<string, string>;
}

/**
 * Reads a SKILL.md; throws SkillError saying what is missing or wrong. The YAML parser (a sixth
 * of the stack's code) loads with the first skill read, not with the stack.
 */
export async function parseSkill(text: string, source: SkillInfo['source']): Promise<Skill> {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text.replace(/^\uFEFF/, ''));
  if (!match) throw new SkillError('A SKILL.md starts with frontmatter between two "---" lines, with a name and a description.');
  const { parse: parseYaml } = await import('yaml');
  let meta: unknown;
  try {
    meta = parseYaml(match[1]!);
  } catch (error) {
    throw new SkillError(`The SKILL.md frontmatter is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const fields = (meta && typeof meta === 'object' ? meta : {}) as Record<string, unknown>;
  const name = typeof fields.name === 'string' ? fields.name.trim() : '';
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(name)) throw new SkillError(`The skill's "name" must be 1-64 lower-case letters, digits and hyphens (e.g. clean-csv)${name ? `, not "${name}"` : ''}.`);
  const description = typeof fields.description === 'string' ? fields.description.trim().replace(/\s+/g, ' ') : '';
  if (!description) throw new SkillError(`The skill "${name}" needs a one-line "description" of when it helps.`);
  if (description.length > MAX_DESCRIPTION) throw new SkillError(`The skill "${name}" has a description of ${description.length} characters; at most ${MAX_DESCRIPTION}.`);
  const wanted = fields['allowed-tools'];
  const tools = (Array.isArray(wanted) ? wanted.map(String) : typeof wanted === 'string' ? wanted.split(/[\s,]+/) : []).map((tool) => tool.trim()).filter(Boolean);
  if (!match[2]!.trim()) throw new SkillError(`The skill "${name}" has no instructions after its frontmatter.`);
  return { name, description, tools, source, text, files: new Map() };
}

let builtIn: Promise<readonly Skill[]> | null = null;

/** The skills the app ships, read once when first asked for. */
export function builtInSkills(): Promise<readonly Skill[]> {
  return (builtIn ??= Promise.all([parseSkill(invoiceToTable, 'built_in'), parseSkill(cleanCsv, 'built_in')]).catch((error: unknown) => {
    builtIn = null; // read again when next asked for
    throw error;
  }));
}

/** The stack files a skill store needs (memory/stack-files.ts). */
export interface SkillFiles {
  readText(path: string): Promise<string | undefined>;
  writeText(path: string, text: string): Promise<void>;
  list(path: string): Promise<{ name: string; kind: 'file' | 'directory' }[]>;
  remove(path: string): Promise<void>;
}

export interface Skills {
  /** Built-in and installed skills; an installed one replaces a built-in of the same name. */
  list(): Promise<Skill[]>;
  find(name: string): Promise<Skill | undefined>;
  /** Checks a folder's files (paths inside it, SKILL.md at its top) and, unless `dryRun`, installs them. */
  install(files: { path: string; text: string }[], dryRun?: boolean): Promise<Skill>;
  remove(name: string): Promise<void>;
  /** The system prompt's list: one line per skill. */
  promptList(): Promise<string>;
}

/** `held`: installed skills a stack from elsewhere brought and its owner has not allowed (worker/trust.ts): not offered. */
export function createSkills(files: SkillFiles, held: (name: string) => boolean = () => false): Skills {
  async function installed(): Promise<Skill[]> {
    const found: Skill[] = [];
    for (const entry of await files.list(SKILLS_DIR)) {
      if (entry.kind !== 'directory' || held(entry.name)) continue;
      const text = await files.readText(`${SKILLS_DIR}/${entry.name}/${SKILL_FILE}`);
      if (text === undefined) continue;
      try {
        const skill = await parseSkill(text, 'installed');
        // The folder's name is the skill's: a SKILL.md renamed in place stays under its folder.
        if (skill.name === entry.name) found.push(skill);
      } catch {
        // A broken skill is not offered; Settings shows only what loads.
      }
    }
    return found;
  }

  async function list(): Promise<Skill[]> {
    const [own, shipped] = await Promise.all([installed(), builtInSkills()]);
    return [...shipped.filter((skill) => !own.some((mine) => mine.name === skill.name)), ...own];
  }

  return {
    list,
    async find(name) {
      const skill = (await list()).find((candidate) => candidate.name === name.trim());
      if (!skill || skill.source === 'built_in') return skill;
      // An installed skill's other files, for load_skill to name and read.
      const folder = `${SKILLS_DIR}/${skill.name}`;
      const walk = async (dir: string, prefix: string): Promise<void> => {
        for (const entry of await files.list(dir)) {
          const path = `${prefix}${entry.name}`;
          if (entry.kind === 'directory') await walk(`${dir}/${entry.name}`, `${path}/`);
          else if (path !== SKILL_FILE) skill.files.set(path, (await files.readText(`${dir}/${entry.name}`)) ?? '');
        }
      };
      await walk(folder, '');
      return skill;
    },
    async install(given, dryRun = false) {
      if (given.length > MAX_FILES) throw new SkillError(`A skill has at most ${MAX_FILES} files; this one has ${given.length}.`);
      const bytes = given.reduce((sum, file) => sum + file.text.length, 0);
      if (bytes > MAX_BYTES) throw new SkillError(`A skill is at most 1 MB of text; this one is ${(bytes / 1e6).toFixed(1)} MB.`);
      // A folder picked whole arrives as "<folder>/SKILL.md": its top folder is dropped.
      const top = given.find((file) => file.path.split('/').at(-1) === SKILL_FILE && file.path.split('/').length <= 2);
      if (!top) throw new SkillError('A skill needs a SKILL.md at the top of its folder.');
      const base = top.path.slice(0, -SKILL_FILE.length);
      const skill = await parseSkill(top.text, 'installed');
      for (const file of given) {
        if (!file.path.startsWith(base)) throw new SkillError(`"${file.path}" is outside the skill's folder.`);
        const inside = file.path.slice(base.length);
        if (!inside || inside.split('/').some((part) => !part || part === '.' || part === '..' || part.startsWith('.'))) throw new SkillError(`"${file.path}" is not a file name a skill may have.`);
        if (inside !== SKILL_FILE) skill.files.set(inside, file.text);
      }
      if (dryRun) return skill;
      const folder = `${SKILLS_DIR}/${skill.name}`;
      await files.remove(folder).catch(() => {});
      for (const [path, text] of skill.files) await files.writeText(`${folder}/${path}`, text);
      await files.writeText(`${folder}/${SKILL_FILE}`, top.text);
      return skill;
    },
    async remove(name) {
      const skill = (await installed()).find((candidate) => candidate.name === name);
      if (!skill) throw new SkillError(`There is no installed skill "${name}"${(await builtInSkills()).some((b) => b.name === name) ? ' (a built-in skill cannot be removed)' : ''}.`);
      await files.remove(`${SKILLS_DIR}/${name}`);
    },
    async promptList() {
      return (await list()).map((skill) => `- ${skill.name}: ${skill.description}`).join('\n');
    },
  };
}

/** A skill as the agent's load_skill reads it. */
export function skillForModel(skill: Skill, file?: string): string {
  if (file) {
    const text = skill.files.get(file);
    if (text === undefined) throw new SkillError(`The skill "${skill.name}" has no file "${file}"${skill.files.size ? `; it has ${[...skill.files.keys()].join(', ')}` : ''}.`);
    return text;
  }
  const others = skill.files.size ? `\n\nThe skill's other files (read one with load_skill and "file"): ${[...skill.files.keys()].join(', ')}` : '';
  const tools = skill.tools.length ? `\n\nTools this skill uses: ${skill.tools.join(', ')} (each passes the permission rules as usual).` : '';
  return `${skill.text}${tools}${others}`;
}
