// read: a text file from user space, with line numbers, a window of lines at a time.
import { z } from 'zod';
import { defineTool } from './define-tool.ts';
import type { UserFiles } from '../user-files.ts';
import space from './file-tools.md?raw';

export const readSchema = z.object({
  path: z.string().min(1).describe('File path in the user space, e.g. "documents/notes.txt".'),
  offset: z.number().int().min(1).optional().describe('First line to read (1-based). Default 1.'),
  limit: z.number().int().min(1).max(5000).optional().describe('How many lines. Default 2000.'),
});

const BINARY = /^(application\/(pdf|zip|octet-stream|vnd\.)|image\/)/;

export function createReadTool(files: Pick<UserFiles, 'stat' | 'read'>) {
  return defineTool({
    name: 'read',
    description: `Read a text file, with line numbers (like cat -n). Long files: use offset and limit.\n${space}`,
    schema: readSchema,
    title: (input) => `Reading ${input.path}`,
    async run(input) {
      const info = await files.stat(input.path);
      if (!info) throw new Error(`No file at "${input.path}". Use glob to find files.`);
      if (BINARY.test(info.mime)) {
        throw new Error(`${info.path} is ${info.mime}, not text. For a PDF or image, read its extracted text (the .txt beside it) or use read_ocr.`);
      }
      const text = new TextDecoder().decode(await files.read(info.path));
      const lines = text.split('\n');
      const start = (input.offset ?? 1) - 1;
      const slice = lines.slice(start, start + (input.limit ?? 2000));
      if (slice.length === 0) return `${info.path} has ${lines.length} lines; nothing at line ${start + 1}.`;
      const width = String(start + slice.length).length;
      const body = slice.map((line, i) => `${String(start + i + 1).padStart(width)}\t${line}`).join('\n');
      const more = start + slice.length < lines.length ? `\n[${lines.length - start - slice.length} more lines; continue with offset ${start + slice.length + 1}]` : '';
      return body + more;
    },
  });
}
