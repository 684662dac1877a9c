// Skills: procedures the agent loads when relevant.

/** A skill as listed: the system prompt shows its name and description only. `tools`: what it says it uses (shown; it grants nothing). */
export interface SkillInfo {
  name: string;
  description: string;
  tools: string[];
  source: 'built_in' | 'installed';
}

/** A skill as shown before and after installing: its SKILL.md and the names of its other files. */
export type SkillDetail = SkillInfo & { text: string; files: string[] };
