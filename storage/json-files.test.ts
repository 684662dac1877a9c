import { describe, expect, it, vi } from 'vitest';
import { createMemoryStorage } from './json-files.ts';

describe('createMemoryStorage', () => {
  it('reads back what it wrote, and undefined for what it never did', async () => {
    const storage = createMemoryStorage();
    await storage.writeJson('settings.json', { n: 1 });
    expect(await storage.readJson('settings.json')).toEqual({ n: 1 });
    expect(await storage.readJson('absent.json')).toBeUndefined();
  });

  it('sets a corrupt file aside rather than losing it, as the OPFS folder does', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(42);
    const storage = createMemoryStorage({ 'canvas.json': '{"windows": [tru' });
    expect(await storage.readJson('canvas.json')).toBeUndefined();
    expect([...storage.files]).toEqual([['canvas.json.corrupt-42', '{"windows": [tru']]);
    vi.restoreAllMocks();
  });
});
