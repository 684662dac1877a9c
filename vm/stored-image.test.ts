import { describe, expect, it } from 'vitest';
import type { ImageManifest } from './image.ts';
import { imageFolderName, packedChunkFiles, packOrder, parseStackImage, storedImageBase } from './stored-image.ts';

const chunk = (index: number, sha: string, size: number) => ({ index, sha256: sha.repeat(64), file: `disk/${sha}.gzip`, compressedSize: size });
const manifest = { disk: { size: 4 << 18, chunkSize: 1 << 18, compression: 'gzip', chunks: [chunk(0, 'a', 3), chunk(1, 'b', 2), chunk(2, 'a', 3), chunk(3, 'c', 4)] } } as unknown as ImageManifest;

describe('a stored image', () => {
  it("packs each distinct chunk once, in the manifest's order, and reads each back by its hash", async () => {
    expect(packOrder(manifest).map((c) => c.index)).toEqual([0, 1, 3]);
    const pack = new File([new Uint8Array([1, 1, 1, 2, 2, 3, 3, 3, 3])], 'disk.bin');
    const files = packedChunkFiles(manifest, pack);
    expect([...(await files.list())].sort()).toEqual(['a', 'b', 'c'].map((sha) => sha.repeat(64)));
    expect(await files.read('b'.repeat(64))).toEqual(new Uint8Array([2, 2]));
    expect(await files.read('c'.repeat(64))).toEqual(new Uint8Array([3, 3, 3, 3]));
    expect(await files.read('d'.repeat(64))).toBeNull();
  });

  it('holds no chunk at all when its pack is not the size its manifest gives', async () => {
    const files = packedChunkFiles(manifest, new File([new Uint8Array(8)], 'disk.bin'));
    expect((await files.list()).size).toBe(0);
    expect(await files.read('a'.repeat(64))).toBeNull();
  });

  it("is named by its recipe and its contents' checksum, and a stack names it in image.json", () => {
    const folder = imageFolderName('0123456789abcdef', 'f'.repeat(64));
    expect(folder).toBe('0123456789abcdef-ffffffffffffffff');
    expect(storedImageBase(folder)).toBe('stored-image:images/0123456789abcdef-ffffffffffffffff');
    expect(parseStackImage(JSON.stringify({ recipe: '0123456789abcdef', folder }))).toEqual({ recipe: '0123456789abcdef', folder });
    expect(parseStackImage(JSON.stringify({ recipe: '0123456789abcdef', folder: '../base' }))).toBeNull();
    expect(parseStackImage('not json')).toBeNull();
  });
});
