import { describe, expect, it } from 'vitest';
import { shareId, takeFiles, withoutShare } from './launch-files.ts';

describe('files from the OS', () => {
  it('opens the first .stack file as a stack and uploads the rest, as a drop does', () => {
    const taken: { upload: string[][]; stack: string[] } = { upload: [], stack: [] };
    const taker = { upload: (files: File[]) => taken.upload.push(files.map((f) => f.name)), openStackFile: (file: File) => taken.stack.push(file.name) };
    takeFiles([new File(['%PDF'], 'a.pdf'), new File(['PK'], 'Team.STACK'), new File(['x'], 'b.csv')], taker);
    expect(taken).toEqual({ upload: [['a.pdf', 'b.csv']], stack: ['Team.STACK'] });
    takeFiles([new File(['PK'], 'only.stack')], taker);
    expect(taken.upload).toHaveLength(1);
  });

  it('reads a share id only when it is one the service worker makes, and drops it from the address once placed', () => {
    expect(shareId('?share=mie2x1-ab12cd')).toBe('mie2x1-ab12cd');
    expect(shareId('?share=a/b')).toBeNull();
    expect(shareId('?share=' + encodeURIComponent('..') + '%2Fx')).toBeNull();
    expect(shareId('?stack=s1')).toBeNull();
    expect(withoutShare('https://app.test/stackdocs/?stack=s1&share=x-1&add=1#top')).toBe('/stackdocs/?stack=s1#top');
    expect(withoutShare('https://app.test/?share=x-1')).toBe('/');
  });
});
