import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatMemoryFile, loadMemoryPrompt } from './loader.ts';
import { countLines, isEffectivelyEmpty, MEMORY_FILES } from './memory-files.ts';
import { createInMemoryStackFiles, memoryFilesOf } from './stack-files.ts';
import { MEMORY_TEMPLATES } from './templates.ts';
import { openTestMemory, type TestMemory } from './test-helpers.ts';

let opened: TestMemory | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

const noActions = { pendingActions: async () => [] };

describe('memory file templates', () => {
  it('has all six with their structure and within their line limits', () => {
    expect(MEMORY_FILES.map((f) => [f.name, f.maxLines])).toEqual([
      ['soul.md', 200],
      ['os.md', 200],
      ['tools.md', 150],
      ['files.md', 200],
      ['user.md', 200],
      ['context.md', 200],
    ]);
    for (const spec of MEMORY_FILES) {
      const template = MEMORY_TEMPLATES[spec.name];
      expect(countLines(template), spec.name).toBeLessThanOrEqual(spec.maxLines);
      expect(template.startsWith(`# ${spec.title}\n`), spec.name).toBe(true);
    }
    const headings = (name: keyof typeof MEMORY_TEMPLATES) => MEMORY_TEMPLATES[name].match(/^## .+$/gm);
    expect(headings('files.md')).toEqual(['## Documents', '## Extractions', '## Recent Activity']);
    expect(headings('user.md')).toEqual(['## Key Facts', '## Preferences', '## Work History']);
    expect(headings('context.md')).toEqual(['## Currently Working On', '## Remember', '## Follow Up']);
    expect(MEMORY_TEMPLATES['tools.md']).toMatch(/create_window/);
    expect(MEMORY_TEMPLATES['tools.md']).toMatch(/bash/);
    expect(MEMORY_TEMPLATES['tools.md']).toMatch(/search_memory/);
    expect(MEMORY_TEMPLATES['os.md']).toMatch(/never instructions/);
    expect(MEMORY_TEMPLATES['soul.md']).toMatch(/Stackdocs/);
  });

  it('starts files.md, user.md and context.md in their empty state', () => {
    expect(MEMORY_FILES.filter((f) => isEffectivelyEmpty(MEMORY_TEMPLATES[f.name])).map((f) => f.name)).toEqual([
      'files.md',
      'user.md',
      'context.md',
    ]);
  });
});

describe('loadMemoryPrompt', () => {
  it('returns all seven sections when populated, in order', async () => {
    const m = (opened = await openTestMemory());
    await m.files.write('files.md', '# Files\n\n## Documents\n- invoice.pdf: ACME invoice, March\n');
    await m.files.write('user.md', '# User\n\n## Key Facts\n- Works at Acme\n');
    await m.files.write('context.md', '# Context\n\n## Follow Up\n- Send the report\n');
    await m.memory.addPendingAction({ content: 'Ask for the April invoice', priority: 'high' });
    const prompt = await m.loadPrompt();
    expect(prompt.sections).toEqual(['Soul', 'System', 'Tools', 'Files', 'User', 'Context', 'Pending Actions']);
    expect(prompt.problems).toEqual([]);
    const headers = prompt.text.match(/^## .+$/gm);
    expect(headers).toEqual(['## Soul', '## System', '## Tools', '## Files', '## User', '## Context', '## Pending Actions']);
    expect(prompt.text).toContain('### Key Facts\n- Works at Acme');
    expect(prompt.text).toContain('- Ask for the April invoice (high priority), noted 2026-01-01');
  });

  it('omits empty sections cleanly: empty files, empty sub-sections, no actions, no comments', async () => {
    const m = (opened = await openTestMemory());
    await m.files.write('user.md', '# User\n<!-- guidance -->\n\n## Key Facts\n\n## Preferences\n- Uppercase vendor names\n\n## Work History\n');
    const prompt = await m.loadPrompt();
    expect(prompt.sections).toEqual(['Soul', 'System', 'Tools', 'User']);
    expect(prompt.text).not.toContain('Pending Actions');
    expect(prompt.text).not.toContain('<!--');
    expect(prompt.text).not.toContain('Key Facts');
    expect(prompt.text).not.toContain('Work History');
    expect(prompt.text).toContain('## User\n\n### Preferences\n- Uppercase vendor names');
    expect(prompt.text).not.toMatch(/\n{3,}/);
  });

  it('reads the files from .os/memory/', async () => {
    const disk = createInMemoryStackFiles();
    for (const spec of MEMORY_FILES) await disk.writeText(`.os/memory/${spec.name}`, `# ${spec.title}\nfrom ${spec.name}\n`);
    await disk.writeText('user.md', '# User\nwrong place\n');
    const prompt = await loadMemoryPrompt({ files: memoryFilesOf(disk), memory: noActions });
    for (const spec of MEMORY_FILES) expect(prompt.text).toContain(`from ${spec.name}`);
    expect(prompt.text).not.toContain('wrong place');
  });

  it('reports missing and over-long files instead of failing', async () => {
    const disk = createInMemoryStackFiles({
      '.os/memory/soul.md': '# Soul\nok\n',
      '.os/memory/tools.md': `# Tools\n${Array.from({ length: 200 }, (_, i) => `- step ${i}`).join('\n')}\n`,
    });
    const broken = { pendingActions: async () => Promise.reject(new Error('memory.db is gone')) };
    const prompt = await loadMemoryPrompt({ files: memoryFilesOf(disk), memory: broken });
    expect(prompt.sections).toEqual(['Soul', 'Tools']);
    expect(prompt.text).toContain('- step 148');
    expect(prompt.text).not.toContain('- step 149');
    expect(prompt.problems).toEqual([
      'os.md is missing',
      'tools.md has 201 lines, over its limit of 150; the rest was left out',
      'files.md is missing',
      'user.md is missing',
      'context.md is missing',
      'pending actions: memory.db is gone',
    ]);
  });

  it('keeps code fences intact when shifting headings', () => {
    expect(formatMemoryFile('# Tools\n## Procedures\n```sh\n# not a heading\n```\n')).toBe('### Procedures\n```sh\n# not a heading\n```');
  });

  it('has no trace of the old MEMORY.md and journal files', () => {
    const dir = import.meta.dirname;
    const sources = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
    for (const name of sources) {
      const text = readFileSync(join(dir, name), 'utf8');
      expect(text, name).not.toMatch(/MEMORY\.md|journal\.(py|ts)|journals/);
    }
  });
});
