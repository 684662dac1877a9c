// The six memory files: their names, the prompt section each becomes, and their line limits.

export interface MemoryFileSpec {
  name: string;
  /** The `## <title>` section the loader gives the file in the system prompt. */
  title: string;
  maxLines: number;
  /** The processor's reply keyword that rewrites this file. */
  updateKeyword: string;
  /** One line on what belongs in the file; the processor reads it. */
  purpose: string;
}

export const MEMORY_FILES = [
  {
    name: 'soul.md',
    title: 'Soul',
    maxLines: 200,
    updateKeyword: 'SOUL_MD_UPDATE',
    purpose: "the assistant's personality, voice and character",
  },
  {
    name: 'os.md',
    title: 'System',
    maxLines: 200,
    updateKeyword: 'OS_MD_UPDATE',
    purpose: 'system rules, constraints, app identity, canvas guidance, autonomy boundaries',
  },
  {
    name: 'tools.md',
    title: 'Tools',
    maxLines: 150,
    updateKeyword: 'TOOLS_MD_UPDATE',
    purpose: 'base capabilities and learned procedures (what was installed, how a task is done here)',
  },
  {
    name: 'files.md',
    title: 'Files',
    maxLines: 200,
    updateKeyword: 'FILES_MD_UPDATE',
    purpose: "an index of the user's documents, extractions and recent file activity",
  },
  {
    name: 'user.md',
    title: 'User',
    maxLines: 200,
    updateKeyword: 'USER_MD_UPDATE',
    purpose: "key facts about the user, their preferences and corrections, their work history",
  },
  {
    name: 'context.md',
    title: 'Context',
    maxLines: 200,
    updateKeyword: 'CONTEXT_MD_UPDATE',
    purpose: 'what is being worked on now, what to remember, what to follow up',
  },
] as const satisfies readonly MemoryFileSpec[];

export type MemoryFileName = (typeof MEMORY_FILES)[number]['name'];

export function memoryFileSpec(name: string): MemoryFileSpec | undefined {
  return MEMORY_FILES.find((file) => file.name === name);
}

/** Lines as an editor counts them: a final newline does not start another line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  return text.replace(/\r?\n$/, '').split(/\r?\n/).length;
}

/** Drops HTML comments: guidance for the processor, not for the agent's prompt. */
export function stripComments(text: string): string {
  return text.replace(/<!--[\s\S]*?-->/g, '');
}

/** True when a file holds nothing but headings, comments and blank lines (a fresh template). */
export function isEffectivelyEmpty(text: string): boolean {
  return stripComments(text)
    .split(/\r?\n/)
    .every((line) => line.trim() === '' || /^\s{0,3}#{1,6}(\s|$)/.test(line));
}
