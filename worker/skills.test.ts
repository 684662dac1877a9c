// Skills: SKILL.md read and checked, the two built in, one installed from a folder (replacing a
// built-in of its name, with its other files), the system prompt's list, load_skill, removal.
import { describe, expect, it } from 'vitest';
import { createInMemoryStackFiles } from '../memory/stack-files.ts';
import { systemPrompt } from './agent/system-prompt.ts';
import { builtInSkills, createSkills, parseSkill, SkillError } from './skills.ts';
import { DEFAULT_RULES, evaluate } from './permissions/rules.ts';
import { createLoadSkillTool } from './tools/load-skill.ts';
import { createSaveSkillTool } from './tools/save-skill.ts';

const SKILL = `---
name: vat-check
description: Check that each invoice's VAT number is well formed for its country before totals are trusted.
allowed-tools: [bash, web_fetch]
---
1. Run \`python3 scripts/vat.py <number>\` for each invoice.
2. Report the invalid ones.
`;

describe('skills', () => {
  it('reads a SKILL.md and says what is wrong with a bad one', async () => {
    expect(await parseSkill(SKILL, 'installed')).toMatchObject({ name: 'vat-check', tools: ['bash', 'web_fetch'], description: expect.stringContaining('VAT number') });
    expect((await parseSkill(SKILL.replace('[bash, web_fetch]', 'bash, read'), 'installed')).tools).toEqual(['bash', 'read']);
    await expect(parseSkill('# no frontmatter', 'installed')).rejects.toThrow(/starts with frontmatter/);
    await expect(parseSkill(SKILL.replace('vat-check', 'VAT Check'), 'installed')).rejects.toThrow(/lower-case letters, digits and hyphens.*not "VAT Check"/);
    await expect(parseSkill(SKILL.replace(/description: .*\n/, ''), 'installed')).rejects.toThrow(/needs a one-line "description"/);
    await expect(parseSkill(SKILL.replace('name: vat-check', 'name: [unclosed'), 'installed')).rejects.toThrow(SkillError);
    await expect(parseSkill('---\nname: x\ndescription: y\n---\n', 'installed')).rejects.toThrow(/no instructions/);
  });

  it('ships two, installs from a folder with its files, lists names and descriptions only, and loads one whole', async () => {
    expect((await builtInSkills()).map((skill) => skill.name)).toEqual(['invoice-to-table', 'clean-csv']);
    const files = createInMemoryStackFiles();
    const skills = createSkills(files);
    const folder = [
      { path: 'vat-check/SKILL.md', text: SKILL },
      { path: 'vat-check/scripts/vat.py', text: 'print("ok")\n' },
    ];
    const preview = await skills.install(folder, true);
    expect(preview.files.get('scripts/vat.py')).toBe('print("ok")\n');
    expect(files.files.size).toBe(0);
    await skills.install(folder);
    expect([...files.files.keys()].sort()).toEqual(['.os/skills/vat-check/SKILL.md', '.os/skills/vat-check/scripts/vat.py']);
    expect((await skills.list()).map((skill) => `${skill.name}:${skill.source}`)).toEqual(['invoice-to-table:built_in', 'clean-csv:built_in', 'vat-check:installed']);

    const list = await skills.promptList();
    expect(list).toContain('- vat-check: Check that each invoice');
    const prompt = systemPrompt({ canvas: '', memory: '', attachments: '', skills: list }).stable;
    expect(prompt).toContain('<skills>');
    expect(prompt).not.toContain('scripts/vat.py <number>');

    const tool = createLoadSkillTool(skills);
    expect(tool.spec).toMatchSnapshot();
    const loaded = await tool.execute({ name: 'vat-check' }, { signal: new AbortController().signal, tool_use_id: 't' });
    expect(loaded.content).toContain('1. Run `python3 scripts/vat.py <number>`');
    expect(loaded.content).toContain('Tools this skill uses: bash, web_fetch');
    expect(loaded.content).toContain("The skill's other files (read one with load_skill and \"file\"): scripts/vat.py");
    expect((await tool.execute({ name: 'vat-check', file: 'scripts/vat.py' }, { signal: new AbortController().signal, tool_use_id: 't' })).content).toBe('print("ok")\n');
    const missing = await tool.execute({ name: 'nope' }, { signal: new AbortController().signal, tool_use_id: 't' });
    expect(missing).toMatchObject({ is_error: true, content: expect.stringContaining('the skills are invoice-to-table, clean-csv, vat-check') });
    expect((await tool.execute({ name: 'clean-csv' }, { signal: new AbortController().signal, tool_use_id: 't' })).content).toContain('pd.to_numeric');
  });

  it('refuses a folder with no SKILL.md, paths that leave it, or too much; removes installed skills only', async () => {
    const files = createInMemoryStackFiles();
    const skills = createSkills(files);
    await expect(skills.install([{ path: 'x/readme.md', text: 'hi' }])).rejects.toThrow('A skill needs a SKILL.md at the top of its folder.');
    await expect(skills.install([{ path: 'x/SKILL.md', text: SKILL }, { path: 'x/../../etc/passwd', text: 'x' }])).rejects.toThrow(/is not a file name a skill may have/);
    await expect(skills.install([{ path: 'x/SKILL.md', text: SKILL }, { path: 'y/other.txt', text: 'x' }])).rejects.toThrow(/outside the skill's folder/);
    await expect(skills.install([{ path: 'SKILL.md', text: SKILL + 'x'.repeat(1_100_000) }])).rejects.toThrow(/at most 1 MB/);
    await skills.install([{ path: 'SKILL.md', text: SKILL.replace('vat-check', 'clean-csv') }]);
    expect((await skills.list()).find((skill) => skill.name === 'clean-csv')?.source).toBe('installed');
    await expect(skills.remove('invoice-to-table')).rejects.toThrow('(a built-in skill cannot be removed)');
    await skills.remove('clean-csv');
    expect((await skills.list()).find((skill) => skill.name === 'clean-csv')?.source).toBe('built_in');
    expect(files.files.size).toBe(0);
  });

  it('lets the agent save a procedure as a skill, only ever after asking', async () => {
    const files = createInMemoryStackFiles();
    const skills = createSkills(files);
    const tool = createSaveSkillTool(skills);
    expect(tool.spec).toMatchSnapshot();
    const input = { name: 'monthly-close', description: 'Close the month: reconcile invoices against the bank CSV.', tools: ['bash', 'read'], steps: '1. Load bank.csv with pandas.\n2. Match by amount and date.' };
    expect(evaluate(DEFAULT_RULES, { tool: 'save_skill', input }).decision).toBe('ask');
    expect(tool.title(input)).toBe('Saving the skill "monthly-close" (uses bash, read): Close the month: reconcile invoices against the bank CSV.');
    const result = await tool.execute(input, { signal: new AbortController().signal, tool_use_id: 't' });
    expect(result.content).toContain('Saved the skill "monthly-close"');
    const saved = await skills.find('monthly-close');
    expect(saved).toMatchObject({ source: 'installed', tools: ['bash', 'read'], description: input.description });
    expect(saved!.text).toContain('2. Match by amount and date.');
    expect((await tool.execute({ ...input, name: 'Bad Name' }, { signal: new AbortController().signal, tool_use_id: 't' })).is_error).toBe(true);
  });
});
