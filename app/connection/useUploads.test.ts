import { describe, expect, it } from 'vitest';
import { StackCallError, type StackClient } from './stack-client.ts';
import { createUploader, type UploadProgress } from './useUploads.ts';

/** A client whose `upload_file` refuses the names in `refuse` (with the stack's message) and throws a bare error for `broken`. */
function client(refuse: string[], broken: string[] = []) {
  const sent: string[] = [];
  const fake = {
    async call(method: string, params: { name: string }) {
      expect(method).toBe('upload_file');
      sent.push(params.name);
      if (refuse.includes(params.name)) throw new StackCallError({ code: 'bad_request', message: `${params.name} is empty.` });
      if (broken.includes(params.name)) throw new Error('port closed');
      return { path: `documents/${params.name}` };
    },
  } as unknown as StackClient;
  return { fake, sent };
}

const file = (name: string) => new File(['x'], name);

describe('createUploader', () => {
  it('sends the files one at a time, says which one goes, and keeps each refusal by name', async () => {
    const { fake, sent } = client(['empty.pdf'], ['lost.png']);
    const uploader = createUploader(fake);
    const seen: UploadProgress[] = [];
    uploader.progress.subscribe((state) => seen.push(state));
    await uploader.upload([file('a.pdf'), file('empty.pdf'), file('lost.png'), file('b.txt')]);
    expect(sent).toEqual(['a.pdf', 'empty.pdf', 'lost.png', 'b.txt']);
    expect(seen.map((state) => state.busy)).toEqual(['a.pdf', 'empty.pdf', 'lost.png', 'b.txt', null]);
    expect(uploader.progress.getState()).toEqual({ busy: null, errors: ['empty.pdf is empty.', 'lost.png could not be read.'] });
  });

  it('a batch that all goes in clears the refusals of the one before', async () => {
    const uploader = createUploader(client(['empty.pdf']).fake);
    await uploader.upload([file('empty.pdf')]);
    expect(uploader.progress.getState().errors).toHaveLength(1);
    await uploader.upload([file('fine.pdf')]);
    expect(uploader.progress.getState()).toEqual({ busy: null, errors: [] });
  });
});
