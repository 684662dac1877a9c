import { afterEach, describe, expect, it, vi } from 'vitest';
import { JOURNAL, JOURNAL_MAX_BYTES, readJournal } from './opfs-workspace.ts';

/** A machine folder holding only the journal, as `text`. */
const folder = (text: string | null) =>
  ({
    getFileHandle: async (name: string) => {
      if (name !== JOURNAL || text === null) throw new DOMException('absent', 'NotFoundError');
      return { getFile: async () => new Blob([text]) };
    },
  }) as unknown as FileSystemDirectoryHandle;

afterEach(() => vi.restoreAllMocks());

describe('readJournal', () => {
  it('reads a journal the share wrote', async () => {
    const journal = { generation: 'g1', msize: 512_000, fids: [[0, ''], [4, 'documents/a.txt']] };
    expect(await readJournal(folder(JSON.stringify(journal)))).toEqual(journal);
    expect(await readJournal(folder(null))).toBeNull();
    expect(await readJournal(folder('{"torn'))).toBeNull();
  });

  it('takes none that reaches the system space or past /workspace, saying why, and the guest starts afresh', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(await readJournal(folder(JSON.stringify({ generation: 'g1', msize: 8192, fids: [[0, ''], [5, '.os/config/secrets.json']] })))).toBeNull();
    expect(warn).toHaveBeenLastCalledWith(expect.stringContaining('fid 5 names ".os/config/secrets.json", outside what the guest may see of /workspace'));
    expect(await readJournal(folder(JSON.stringify({ generation: 'g1', msize: 8192, fids: [[5, 'documents/../../etc']] })))).toBeNull();
    expect(await readJournal(folder(JSON.stringify({ generation: 'g1', msize: 2 ** 31, fids: [] })))).toBeNull();
    expect(warn).toHaveBeenLastCalledWith(expect.stringContaining('its message size 2147483648 is not between'));
    expect(await readJournal(folder(' '.repeat(JOURNAL_MAX_BYTES + 1)))).toBeNull();
  });
});
