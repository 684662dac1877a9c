// A stored image in real OPFS, as the VM worker reads it: its files by URL, nothing outside its folder.
import { afterAll, describe, expect, it } from 'vitest';
import { IMAGES_DIR, storedImageBase, storedImageFetch, storedImageFile } from './stored-image.ts';

const folder = `0123456789abcdef-${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`;
const root = () => navigator.storage.getDirectory();

afterAll(async () => {
  await (await (await root()).getDirectoryHandle(IMAGES_DIR)).removeEntry(folder, { recursive: true });
});

describe('storedImageFetch', () => {
  it("answers the folder's own files and nothing else", async () => {
    const dir = await (await (await root()).getDirectoryHandle(IMAGES_DIR, { create: true })).getDirectoryHandle(folder, { create: true });
    const writable = await (await dir.getFileHandle('manifest.json', { create: true })).createWritable();
    await writable.write('{"format":1}');
    await writable.close();
    const fetch = storedImageFetch(root);
    const base = storedImageBase(folder);
    const found = await fetch(`${base}/manifest.json`);
    expect(found.status).toBe(200);
    expect(await found.text()).toBe('{"format":1}');
    expect((await fetch(`${base}/state.zstd`)).status).toBe(404);
    expect((await fetch(`${base}/../${folder}/manifest.json`)).status).toBe(404);
    expect((await fetch(`${base}/disk/x.gzip`)).status).toBe(404);
    expect(await storedImageFile(root, `https://example.test/${folder}/manifest.json`)).toBeNull();
    expect((await storedImageFile(root, `${base}/manifest.json`))?.size).toBe(12);
  });
});
