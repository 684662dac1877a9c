import { describe, expect, it } from 'vitest';
import { splitCommandLine } from './command-line.ts';

describe('splitCommandLine', () => {
  it('splits on spaces and keeps quoted words whole', () => {
    expect(splitCommandLine('node /workspace/tools/server.mjs --port 3')).toEqual(['node', '/workspace/tools/server.mjs', '--port', '3']);
    expect(splitCommandLine(`python3 "my server.py" --name 'a b' ""`)).toEqual(['python3', 'my server.py', '--name', 'a b', '']);
    expect(splitCommandLine('say "a \\"quoted\\" word" plain\\ space')).toEqual(['say', 'a "quoted" word', 'plain space']);
    expect(splitCommandLine('   ')).toEqual([]);
  });

  it('says when a quote is not closed', () => {
    expect(() => splitCommandLine('node "server.mjs')).toThrow('a quote is not closed');
  });
});
