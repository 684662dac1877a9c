// write: creates or replaces a text file in user space.
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import type { UserFiles } from '../user-files.ts';
import space from './file-tools.md?raw';

export const writeSchema = z.object({
  path: z.string().min(1).describe('File path in the user space, e.g. "artifacts/report.md".'),
  content: z.string().max(5_000_000).describe('The whole new content of the file.'),
});

export function createWriteTool(files: Pick<UserFiles, 'write'>) {
  return defineTool({
    name: 'write',
    description: `Create a file, or replace one's whole content. To change part of a file, use edit.\n${space}`,
    schema: writeSchema,
    title: (input) => `Writing ${input.path}`,
    async run(input) {
      const info = await files.write(input.path, input.content);
      return `Wrote ${info.size} bytes to ${info.path}.`;
    },
  });
}
