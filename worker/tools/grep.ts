// grep: searches text files in user space with a regular expression.
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import { sniffMime, textEncoding } from '../file-kind.ts';
import type { UserFiles } from '../user-files.ts';
import space from './file-tools.md?raw';

export const grepSchema = z.object({
  pattern: z.string().min(1).max(1000).describe('A JavaScript regular expression, e.g. "total\\\\s*:".'),
  glob: z.string().max(500).optional().describe('Only files matching this glob, e.g. "**/*.txt". Default: all text files.'),
  ignore_case: z.boolean().optional(),
  max_results: z.number().int().min(1).max(2000).optional().describe('Default 200.'),
});

const TEXTUAL = /^(text\/|application\/json)/;
const MAX_FILE = 20 * 1024 * 1024;

export function createGrepTool(files: Pick<UserFiles, 'list' | 'read'>) {
  return defineTool({
    name: 'grep',
    description: `Search the text files for lines matching a regular expression; returns path:line: text.\n${space}`,
    schema: grepSchema,
    title: (input) => `Searching for ${input.pattern}`,
    async run(input, context) {
      let regex: RegExp;
      try {
        regex = new RegExp(input.pattern, input.ignore_case ? 'i' : '');
      } catch (error) {
        throw new Error(`Invalid regular expression: ${(error as Error).message}`);
      }
      const inScope = input.glob ? picomatch(input.glob.replace(/^\/?workspace\//, '')) : () => true;
      const max = input.max_results ?? 200;
      const hits: string[] = [];
      let total = 0;
      for (const file of await files.list()) {
        if (context.signal.aborted) throw new Error('stopped');
        if (!inScope(file.path) || file.size > MAX_FILE) continue;
        const bytes = await files.read(file.path);
        if (!TEXTUAL.test(await sniffMime(bytes, file.path))) continue;
        new TextDecoder(textEncoding(bytes) ?? 'utf-8').decode(bytes).split('\n').forEach((line, i) => {
          if (!regex.test(line)) return;
          total++;
          if (hits.length < max) hits.push(`${file.path}:${i + 1}: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
        });
      }
      if (total === 0) return `No matches for /${input.pattern}/.`;
      return hits.join('\n') + (total > hits.length ? `\n[${total - hits.length} more matches; narrow the search]` : '');
    },
  });
}
