// save_skill: the agent writes down a procedure the user asked it to remember, as a skill. It is
// saved only when the user allows it (a default rule asks each time, showing the skill), and it
// grants nothing: the tools it names still ask as the rules say.
import { z } from 'zod';
import type { Skills } from '../skills.ts';
import { defineTool } from './define-tool.ts';

export const saveSkillSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'lower-case letters, digits and hyphens, e.g. monthly-close').describe('The skill\'s name, e.g. monthly-close.'),
  description: z.string().min(1).max(1024).describe('One line: when this skill helps. It is all you will see of the skill until you load it.'),
  tools: z.array(z.string().max(64)).max(30).optional().describe('The tools the steps use (shown to the user; grants nothing).'),
  steps: z.string().min(1).max(50_000).describe('The procedure, in markdown: numbered steps, concrete enough to follow next time without the user.'),
});

export function createSaveSkillTool(skills: Pick<Skills, 'install'>) {
  return defineTool({
    name: 'save_skill',
    description:
      'Save a procedure the user asked you to remember as a skill, to load with load_skill next time the task comes up. The user is asked first and sees the whole skill. Saving one with the name of an existing skill replaces it.',
    schema: saveSkillSchema,
    title: (input) => `Saving the skill "${input.name}"${input.tools?.length ? ` (uses ${input.tools.join(', ')})` : ''}: ${input.description}`,
    async run(input) {
      const { stringify } = await import('yaml');
      const frontmatter = stringify({ name: input.name, description: input.description, ...(input.tools?.length ? { 'allowed-tools': input.tools } : {}) }).trimEnd();
      const skill = await skills.install([{ path: 'SKILL.md', text: `---\n${frontmatter}\n---\n\n${input.steps.trim()}\n` }]);
      return `Saved the skill "${skill.name}". It is listed from the next message on; load it with load_skill.`;
    },
  });
}
