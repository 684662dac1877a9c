// load_skill: a skill's whole procedure (the system prompt lists only names and descriptions),
// or one of its other files.
import { z } from 'zod';
import { skillForModel, type Skills } from '../skills.ts';
import { defineTool } from './define-tool.ts';

export const loadSkillSchema = z.object({
  name: z.string().min(1).max(64).describe('The skill\'s name, as listed under <skills>.'),
  file: z.string().max(300).optional().describe('One of the skill\'s other files, instead of its SKILL.md.'),
});

export function createLoadSkillTool(skills: Pick<Skills, 'find' | 'list'>) {
  return defineTool({
    name: 'load_skill',
    description:
      'Read a skill: a procedure for a kind of task, listed by name and description under <skills> in your instructions. Load it when a task matches its description, then follow it. It grants no permissions: its tools ask as usual.',
    schema: loadSkillSchema,
    title: (input) => `Reading the skill ${input.name}`,
    async run(input) {
      const skill = await skills.find(input.name);
      if (!skill) throw new Error(`there is no skill "${input.name}"; the skills are ${(await skills.list()).map((s) => s.name).join(', ') || 'none'}`);
      return skillForModel(skill, input.file);
    },
  });
}
