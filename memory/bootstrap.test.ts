import { describe, expect, it } from 'vitest';
import { bootstrapStack, LayoutTooNewError, readLayoutVersion } from './bootstrap.ts';
import { isSystemPath, normalizeStackPath } from '../storage/layout.ts';
import { LAYOUT_VERSION, opfsDatabasePath, STACK_LAYOUT } from './layout.ts';
import { MEMORY_FILES } from './memory-files.ts';
import { createInMemoryStackFiles } from './stack-files.ts';
import { MEMORY_TEMPLATES } from './templates.ts';

describe('stack layout', () => {
  it('creates the .os/ system space apart from the user space', async () => {
    const disk = createInMemoryStackFiles();
    await bootstrapStack(disk);
    expect(await disk.list('')).toEqual([
      { name: '.os', kind: 'directory' },
      { name: 'artifacts', kind: 'directory' },
      { name: 'documents', kind: 'directory' },
      { name: 'extractions', kind: 'directory' },
      { name: 'ocr', kind: 'directory' },
    ]);
    expect(await disk.list('.os')).toEqual([
      { name: 'VERSION', kind: 'file' },
      { name: 'config', kind: 'directory' },
      { name: 'memory', kind: 'directory' },
      { name: 'skills', kind: 'directory' },
    ]);
  });

  it('writes the six memory files to .os/memory/ and the version to .os/VERSION', async () => {
    const disk = createInMemoryStackFiles();
    const report = await bootstrapStack(disk);
    for (const { name } of MEMORY_FILES) {
      expect(await disk.readText(`.os/memory/${name}`)).toBe(MEMORY_TEMPLATES[name]);
    }
    expect(await disk.readText('.os/VERSION')).toBe(`${LAYOUT_VERSION}\n`);
    expect(await readLayoutVersion(disk)).toBe(LAYOUT_VERSION);
    expect(report).toEqual({
      previousVersion: 0,
      created: [...MEMORY_FILES.map((f) => `.os/memory/${f.name}`), '.os/VERSION'],
    });
    expect(STACK_LAYOUT.transcriptDb).toBe('.os/memory/transcript.db');
    expect(STACK_LAYOUT.memoryDb).toBe('.os/memory/memory.db');
  });

  it('keeps an existing stack\'s memory files and only fills in what is missing', async () => {
    const disk = createInMemoryStackFiles({ '.os/memory/user.md': '# User\n- Likes tea\n' });
    await bootstrapStack(disk);
    disk.files.delete('.os/memory/context.md');
    const again = await bootstrapStack(disk);
    expect(again).toEqual({ previousVersion: LAYOUT_VERSION, created: ['.os/memory/context.md'] });
    expect(await disk.readText('.os/memory/user.md')).toBe('# User\n- Likes tea\n');
  });

  it('refuses a stack folder from a newer layout', async () => {
    const disk = createInMemoryStackFiles({ '.os/VERSION': '99\n' });
    await expect(bootstrapStack(disk)).rejects.toBeInstanceOf(LayoutTooNewError);
    await expect(bootstrapStack(disk)).rejects.toThrow(/layout version 99.*up to 1/);
    expect(disk.files.has('.os/memory/user.md')).toBe(false);
  });

  it('completes a stack whose .os/VERSION is empty (another worker is writing it, or was killed doing so)', async () => {
    const disk = createInMemoryStackFiles({ '.os/VERSION': '' });
    expect(await readLayoutVersion(disk)).toBe(0);
    const report = await bootstrapStack(disk);
    expect(report.previousVersion).toBe(0);
    expect(await disk.readText('.os/VERSION')).toBe(`${LAYOUT_VERSION}\n`);
  });

  it('still refuses a .os/VERSION that holds something other than a number', async () => {
    await expect(readLayoutVersion(createInMemoryStackFiles({ '.os/VERSION': 'banana' }))).rejects.toThrow(/holds "banana"/);
  });

  it('places databases under the stack folder in OPFS and keeps paths inside the stack', () => {
    expect(opfsDatabasePath('s1', 'transcript')).toBe('/stacks/s1/.os/memory/transcript.db');
    expect(opfsDatabasePath('s1', 'memory')).toBe('/stacks/s1/.os/memory/memory.db');
    expect(() => opfsDatabasePath('../x', 'memory')).toThrow(/not a valid stack id/);
    expect(isSystemPath('.os/memory/user.md')).toBe(true);
    expect(isSystemPath('/.os')).toBe(true);
    expect(isSystemPath('documents/.os')).toBe(false);
    expect(normalizeStackPath('./documents//a.pdf')).toBe('documents/a.pdf');
    expect(() => normalizeStackPath('documents/../../etc')).toThrow(/leaves/);
  });
});
