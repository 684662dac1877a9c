// edit: exact, unique text replacement in a file, so the model changes what it means to change.
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import type { UserFiles } from '../user-files.ts';
import space from './file-tools.md?raw';

export const editSchema = z.object({
  path: z.string().min(1).describe('File path in the user space.'),
  old_string: z.string().min(1).describe('The exact text to replace, including whitespace. Must occur once unless replace_all.'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence. Default false.'),
});

export function createEditTool(files: Pick<UserFiles, 'stat' | 'read' | 'write'>) {
  return defineTool({
    name: 'edit',
    description: `Replace exact text in a file. old_string must match exactly once (give more context to make it unique), or set replace_all.\n${space}`,
    schema: editSchema,
    title: (input) => `Editing ${input.path}`,
    async run(input) {
      const info = await files.stat(input.path);
      if (!info) throw new Error(`No file at "${input.path}".`);
      const text = new TextDecoder().decode(await files.read(info.path));
      if (input.old_string === input.new_string) throw new Error('old_string and new_string are the same: nothing would change.');
      const count = text.split(input.old_string).length - 1;
      if (count === 0) throw new Error(`old_string was not found in ${info.path}. Read the file and copy the text exactly.`);
      if (count > 1 && !input.replace_all) {
        throw new Error(`old_string occurs ${count} times in ${info.path}. Add surrounding text to make it unique, or set replace_all.`);
      }
      const next = input.replace_all ? text.split(input.old_string).join(input.new_string) : text.replace(input.old_string, () => input.new_string);
      await files.write(info.path, next);
      return `Replaced ${input.replace_all ? count : 1} occurrence${count > 1 && input.replace_all ? 's' : ''} in ${info.path}.`;
    },
  });
}
