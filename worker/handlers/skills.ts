// Skills: the list, installing one (checked and shown first), removing an installed one.
import type { SkillDetail } from '../../protocol/skills.ts';
import { SkillError, type Skill, type Skills } from '../skills.ts';
import type { Handlers } from './context.ts';
import { RequestError } from '../request-error.ts';

export function skillHandlers(skills: Skills): Handlers<'list_skills' | 'install_skill' | 'remove_skill'> {
  const refusal = (error: unknown): never => {
    if (error instanceof SkillError) throw new RequestError({ code: 'bad_request', message: error.message });
    throw error;
  };
  return {
    async list_skills() {
      return (await skills.list()).map(({ name, description, tools, source }) => ({ name, description, tools, source }));
    },
    async install_skill(params) {
      const files = Array.isArray(params?.files) ? params.files.filter((file) => typeof file?.path === 'string' && typeof file.text === 'string') : [];
      if (files.length === 0) throw new RequestError({ code: 'bad_request', message: 'Pick a skill\'s folder, or its SKILL.md.' });
      const skill = await skills.install(files, params.dry_run === true).catch(refusal);
      return detail(skill);
    },
    async remove_skill(params) {
      await skills.remove(String(params?.name ?? '')).catch(refusal);
      return {};
    },
  };
}

function detail(skill: Skill): SkillDetail {
  return { name: skill.name, description: skill.description, tools: skill.tools, source: skill.source, text: skill.text, files: [...skill.files.keys()] };
}
