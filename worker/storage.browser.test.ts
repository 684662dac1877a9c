// OPFS storage in real Chromium: atomic JSON files that survive a new handle, corrupt files set aside.
import { afterEach, describe, expect, it } from 'vitest';
import { openOpfsStorage } from './storage.ts';

const stackId = `test-${crypto.randomUUID()}`;

async function stackDir() {
  const root = await navigator.storage.getDirectory();
  return (await (await (await root.getDirectoryHandle('stacks')).getDirectoryHandle(stackId)).getDirectoryHandle('.os')).getDirectoryHandle('config');
}

afterEach(async () => {
  const root = await navigator.storage.getDirectory();
  await (await root.getDirectoryHandle('stacks')).removeEntry(stackId, { recursive: true }).catch(() => {});
});

describe('openOpfsStorage', () => {
  it('writes JSON that a fresh handle reads back', async () => {
    await (await openOpfsStorage(stackId)).writeJson('settings.json', { model: 'm', n: 1 });
    expect(await (await openOpfsStorage(stackId)).readJson('settings.json')).toEqual({ model: 'm', n: 1 });
  });

  it('returns undefined for a file that does not exist', async () => {
    expect(await (await openOpfsStorage(stackId)).readJson('absent.json')).toBeUndefined();
  });

  it('sets a corrupt file aside instead of losing it', async () => {
    const storage = await openOpfsStorage(stackId);
    await storage.writeJson('canvas.json', { ok: true });
    const dir = await stackDir();
    const writable = await (await dir.getFileHandle('canvas.json')).createWritable();
    await writable.write('{"windows": [tru');
    await writable.close();

    expect(await storage.readJson('canvas.json')).toBeUndefined();
    const names: string[] = [];
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
    const aside = names.find((name) => name.startsWith('canvas.json.corrupt-'));
    expect(aside).toBeTruthy();
    expect(await (await (await dir.getFileHandle(aside!)).getFile()).text()).toBe('{"windows": [tru');
    expect(names).not.toContain('canvas.json');
  });
});
