// glob: finds files in user space by pattern.
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import type { UserFiles } from '../user-files.ts';
import space from './file-tools.md?raw';

export const globSchema = z.object({
  pattern: z.string().min(1).max(500).describe('A glob such as "documents/**/*.pdf" or "**/*.csv".'),
});

const MAX = 500;

export function createGlobTool(files: Pick<UserFiles, 'list'>) {
  return defineTool({
    name: 'glob',
    description: `Find files whose path matches a glob pattern; returns paths with sizes.\n${space}`,
    schema: globSchema,
    title: (input) => `Finding ${input.pattern}`,
    async run(input) {
      const isMatch = picomatch(input.pattern.replace(/^\/?workspace\//, ''), { dot: false });
      const found = (await files.list()).filter((file) => isMatch(file.path));
      if (found.length === 0) return `No files match ${input.pattern}.`;
      const lines = found.slice(0, MAX).map((file) => `${file.path} (${file.size} bytes)`);
      if (found.length > MAX) lines.push(`[${found.length - MAX} more; narrow the pattern]`);
      return lines.join('\n');
    },
  });
}
