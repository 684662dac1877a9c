import { describe, expect, it } from 'vitest';
import { createMemoryUserFiles } from '../user-files.ts';
import { createEditTool } from './edit.ts';
import { createGlobTool } from './glob.ts';
import { createGrepTool } from './grep.ts';
import { createReadTool } from './read.ts';
import { createWriteTool } from './write.ts';

const context = { signal: new AbortController().signal, tool_use_id: 't' };
const enc = (text: string) => new TextEncoder().encode(text);

function setup() {
  const files = createMemoryUserFiles({
    'documents/notes.txt': enc('alpha\nbeta\ngamma\nbeta'),
    'documents/scan.pdf': enc('%PDF-1.4 binary'),
    // UTF-16 with its byte-order mark, as Windows tools write it.
    'documents/wide.txt': new Uint8Array([0xff, 0xfe, ...[...'Grüße ACME\n'].flatMap((c) => [c.charCodeAt(0) & 255, c.charCodeAt(0) >> 8])]),
    'extractions/a.json': enc('{"vendor": "ACME", "total": 12}'),
  });
  return {
    files,
    read: createReadTool(files),
    write: createWriteTool(files),
    edit: createEditTool(files),
    glob: createGlobTool(files),
    grep: createGrepTool(files),
  };
}

describe('file tools', () => {
  it('show the model these schemas', () => {
    const { read, write, edit, glob, grep } = setup();
    expect([read, write, edit, glob, grep].map((tool) => tool.spec)).toMatchSnapshot();
  });

  it('read numbers lines, pages with offset/limit, and refuses binary files', async () => {
    const { read } = setup();
    expect((await read.execute({ path: '/workspace/documents/notes.txt' }, context)).content).toBe('1\talpha\n2\tbeta\n3\tgamma\n4\tbeta');
    expect((await read.execute({ path: 'documents/notes.txt', offset: 2, limit: 2 }, context)).content).toBe('2\tbeta\n3\tgamma\n[1 more lines; continue with offset 4]');
    expect((await read.execute({ path: 'documents/scan.pdf' }, context)).content).toContain('is application/pdf, not text');
    expect((await read.execute({ path: 'documents/nope.txt' }, context)).content).toContain('No file at "documents/nope.txt"');
    expect((await read.execute({ path: '.os/settings.json' }, context)).is_error).toBe(true);
  });

  it('write creates files; edit replaces exactly one match or all', async () => {
    const { write, edit, files } = setup();
    expect((await write.execute({ path: 'artifacts/r.md', content: 'x = 1\nx = 1\n' }, context)).content).toBe('Wrote 12 bytes to artifacts/r.md.');
    expect((await edit.execute({ path: 'artifacts/r.md', old_string: 'x = 1', new_string: 'x = 2' }, context)).content).toContain('occurs 2 times');
    expect((await edit.execute({ path: 'artifacts/r.md', old_string: 'y', new_string: 'z' }, context)).content).toContain('was not found');
    expect((await edit.execute({ path: 'artifacts/r.md', old_string: 'x = 1', new_string: 'x = $&2', replace_all: true }, context)).content).toBe('Replaced 2 occurrences in artifacts/r.md.');
    expect(new TextDecoder().decode(files.files.get('artifacts/r.md'))).toBe('x = $&2\nx = $&2\n');
    await edit.execute({ path: 'documents/notes.txt', old_string: 'alpha', new_string: 'ALPHA' }, context);
    expect(new TextDecoder().decode(files.files.get('documents/notes.txt'))).toBe('ALPHA\nbeta\ngamma\nbeta');
  });

  it('glob and grep find files and lines', async () => {
    const { glob, grep } = setup();
    expect((await glob.execute({ pattern: 'documents/*' }, context)).content).toBe('documents/notes.txt (21 bytes)\ndocuments/scan.pdf (15 bytes)\ndocuments/wide.txt (24 bytes)');
    expect((await glob.execute({ pattern: '**/*.csv' }, context)).content).toBe('No files match **/*.csv.');
    expect((await grep.execute({ pattern: 'BETA', ignore_case: true }, context)).content).toBe('documents/notes.txt:2: beta\ndocuments/notes.txt:4: beta');
    expect((await grep.execute({ pattern: 'ACME', glob: 'extractions/**' }, context)).content).toBe('extractions/a.json:1: {"vendor": "ACME", "total": 12}');
    expect((await grep.execute({ pattern: 'Grüße', glob: 'documents/**' }, context)).content).toBe('documents/wide.txt:1: Grüße ACME');
    expect((await grep.execute({ pattern: 'PDF' }, context)).content).toBe('No matches for /PDF/.');
    expect((await grep.execute({ pattern: '(' }, context)).content).toContain('Invalid regular expression');
  });
});
