import { describe, expect, it } from 'vitest';
import { distinctName } from './stack-folders-file.ts';

describe('distinctName', () => {
  it('tells an imported stack apart from the stacks already here', () => {
    expect(distinctName('Receipts', ['My stack'])).toBe('Receipts');
    expect(distinctName('My stack', ['My stack'])).toBe('My stack (imported)');
    expect(distinctName('My stack', ['My stack', 'My stack (imported)'])).toBe('My stack (imported 2)');
    expect(distinctName('My stack', ['my STACK', 'My stack (Imported)', 'My stack (imported 2)'])).toBe('My stack (imported 3)');
    // Unicode's two forms of one name are one name.
    expect(distinctName('Caf\u00e9', ['Cafe\u0301'])).toBe('Caf\u00e9 (imported)');
  });

  it('stays within the 60 characters a name may have', () => {
    const long = 'x'.repeat(60);
    expect(distinctName(long, [long])).toBe(`${'x'.repeat(49)} (imported)`);
    expect(distinctName(long, [long, `${'x'.repeat(49)} (imported)`])).toHaveLength(60);
  });
});
