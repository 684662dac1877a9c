// A stack to a `.stack` file and back, in real Chromium OPFS: every file travels (the databases
// as their consistent copies), no secret does, and each hostile file is refused with its own
// message, leaving no stack behind.
import { strFromU8, strToU8, Zip, ZipDeflate, ZipPassThrough, zipSync, type Zippable } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stackLockName } from '../../protocol/stacks-api.ts';
import { createStackFolders, type StackFolders } from '../stack-folders.ts';
import { exportStack } from './export.ts';
import type { StorageEstimateLike } from '../../storage/quota.ts';
import { unpackStackFile } from '../../tests/support/stack-zip.ts';
import { sha256Hex } from '../../storage/hash.ts';
import { LEFT_OUT } from '../mcp/config.ts';

const IMAGE = 'fd64fdc78ca0f2c7';
const SECRET = 'test-key-secret-0123456789';
let area = '';
let estimate: StorageEstimateLike | undefined;
let folders: StackFolders;

async function stacksDir() {
  return (await navigator.storage.getDirectory()).getDirectoryHandle(area, { create: true });
}

async function put(path: string, bytes: Uint8Array | string) {
  const parts = path.split('/');
  let dir = await stacksDir();
  for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
  const writable = await (await dir.getFileHandle(parts.at(-1)!, { create: true })).createWritable();
  await writable.write(typeof bytes === 'string' ? bytes : bytes.slice());
  await writable.close();
}

async function read(path: string): Promise<string | null> {
  const parts = path.split('/');
  try {
    let dir = await stacksDir();
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
    return await (await (await dir.getFileHandle(parts.at(-1)!)).getFile()).text();
  } catch {
    return null;
  }
}

async function folderNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const [name] of (await stacksDir() as unknown as { entries(): AsyncIterable<[string, unknown]> }).entries()) names.push(name);
  return names.sort();
}

/** A still stack as its worker leaves it after `close {snapshot: true}`. */
async function makeStack() {
  await put('default/.os/config/stack.json', JSON.stringify({ name: 'Receipts', created_at: 1 }));
  await put('default/.os/config/settings.json', JSON.stringify({ provider: 'anthropic', model: 'claude-test' }));
  await put('default/.os/config/secrets.json', JSON.stringify({ api_key: SECRET }));
  await put('default/.os/memory/user.md', '# User\n- vendor names in uppercase\n');
  await put('default/.os/memory/memory.db', 'the live file');
  await put('default/.os/memory/memory.db-journal', '');
  await put('default/.os/memory/transcript.db', 'the live transcript');
  await put('default/.os/snapshot/memory.db', 'memory copy');
  await put('default/.os/snapshot/transcript.db', 'transcript copy');
  await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: IMAGE, state: 'g1', disk: 'g1' }));
  await put('default/.os/vm/state.bin', new Uint8Array(300_000).fill(7));
  const overlay = new Uint8Array(3_000_000);
  for (let i = 0; i < overlay.length; i += 4096) overlay[i] = i % 251;
  await put('default/.os/vm/overlay.data', overlay);
  await put('default/.os/vm/overlay.map', new Uint8Array(4096).fill(1));
  await put('default/documents/invoice.txt', 'ACME 12.50');
  await put('default/made-here.txt', 'from the shell');
}

async function exportBytes(layout: string | null = '{"state":{"geometry":{}},"version":1}', template?: { name: string; description: string }): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const out = new WritableStream<Uint8Array>({ write: (chunk) => void parts.push(chunk.slice()) });
  await folders.exportStack('default', { layout, out, appVersion: '0.1.0', signal: new AbortController().signal, ...(template ? { template } : {}) });
  const all = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.byteLength;
  }
  return all;
}

const importBytes = (bytes: Uint8Array, appImage: string | null = IMAGE) =>
  folders.importStack(new Blob([bytes.slice()]), { appImage, signal: new AbortController().signal });

/** The exported file, changed: its entries and manifest as objects, zipped again (manifest first, checksums last). */
async function rezip(bytes: Uint8Array, change: (files: Record<string, Uint8Array>, manifest: { entries: { path: string; size: number; sha256: string }[]; [key: string]: unknown }) => void): Promise<Uint8Array> {
  const files = await unpackStackFile(bytes);
  const manifest = JSON.parse(strFromU8(files['manifest.json']!));
  delete files['manifest.json'];
  change(files, manifest);
  const ordered: Zippable = { 'manifest.json': strToU8(JSON.stringify(manifest)) };
  // The checksums stay the last entry, where format 2 has them.
  for (const [name, data] of Object.entries(files)) if (name !== 'checksums.json') ordered[name] = data;
  if (files['checksums.json']) ordered['checksums.json'] = files['checksums.json'];
  return zipSync(ordered);
}

/** The file's bytes and every entry's unpacked bytes, as text to search. */
async function everyByte(bytes: Uint8Array): Promise<string> {
  const latin1 = new TextDecoder('latin1');
  return [latin1.decode(bytes), ...Object.values(await unpackStackFile(bytes)).map((entry) => latin1.decode(entry))].join('\n');
}

async function refusal(file: Uint8Array | Promise<Uint8Array>, appImage: string | null = IMAGE): Promise<string> {
  const failure = await importBytes(await file, appImage).then(
    () => null,
    (error: Error) => error,
  );
  expect(failure, 'the file was imported').not.toBeNull();
  // Nothing of it is left: only the original stack's folder.
  expect(await folderNames()).toEqual(['default']);
  return failure!.message;
}

beforeEach(async () => {
  area = `stack-file-test-${crypto.randomUUID().slice(0, 8)}`;
  estimate = { usage: 1_000_000, quota: 10_000_000_000 };
  let n = 0;
  folders = createStackFolders({
    stacksDir,
    locks: webStackLocks(),
    estimate: async () => estimate,
    newId: () => `s-imported${++n}`,
  });
  await makeStack();
});

afterEach(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

function webStackLocks() {
  return {
    async withLock<T>(stackId: string, work: (signal: AbortSignal) => Promise<T>) {
      return navigator.locks.request(`${area}:${stackLockName(stackId)}`, { ifAvailable: true }, async (lock) =>
        lock ? { held: true as const, value: await work(new AbortController().signal) } : { held: false as const },
      );
    },
  };
}

describe('templates', () => {
  it('keep a stack\'s makings and none of its history, uploads, databases, computer or secrets; open as a new stack under its name', async () => {
    await put('default/.os/skills/weekly/SKILL.md', '---\nname: weekly\ndescription: The weekly report.\n---\n1. Do it.\n');
    await put('default/.os/config/hooks.json', '{"hooks":{}}');
    await put('default/.os/config/mcp.json', JSON.stringify({ mcpServers: { crm: { url: 'https://crm.example.com/mcp', headers: { Authorization: 'Bearer crm-key-SECRET' } }, files: { command: 'node', args: ['s.mjs'], env: { TOKEN: 'tok-SECRET' } } } }));
    await put('default/.os/config/conversation.json', '{"messages":[{"role":"user","content":"my private question"}]}');
    await put('default/.os/HEARTBEAT.md', '- remind me\n');
    await put(
      'default/.os/config/canvas.json',
      JSON.stringify({
        version: 1,
        windows: [
          { id: 'w_1', kind: 'table', title: 'Invoices', created_at: 1, updated_at: 1, columns: [], rows: [] },
          { id: 'w_2', kind: 'document', title: 'invoice.txt', created_at: 1, updated_at: 1, path: 'documents/invoice.txt', mime: 'text/plain' },
        ],
        pending: ['The user edited a cell'],
      }),
    );
    const bytes = await exportBytes('{"version":1}', { name: 'Weekly inbox', description: 'Invoices, weekly.' });
    const text = await everyByte(bytes);
    for (const secret of [SECRET, 'crm-key-SECRET', 'tok-SECRET', 'ACME 12.50', 'my private question', 'the live transcript', 'memory copy', 'from the shell', 'The user edited a cell']) expect(text).not.toContain(secret);
    const files = await unpackStackFile(bytes);
    expect(Object.keys(files)).toEqual([
      'manifest.json',
      'layout.json',
      'stack/.os/HEARTBEAT.md',
      'stack/.os/config/canvas.json',
      'stack/.os/config/hooks.json',
      'stack/.os/config/mcp.json',
      'stack/.os/config/settings.json',
      'stack/.os/memory/user.md',
      'stack/.os/skills/weekly/SKILL.md',
      'checksums.json',
    ]);
    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    // The servers travel, their keys do not: whoever opens the template fills them in.
    expect(JSON.parse(strFromU8(files['stack/.os/config/mcp.json']!))).toEqual({ mcpServers: { crm: { url: 'https://crm.example.com/mcp', headers: { Authorization: LEFT_OUT } }, files: { command: 'node', args: ['s.mjs'], env: { TOKEN: LEFT_OUT } } } });
    expect(manifest).toMatchObject({ stack: { name: 'Weekly inbox' }, template: { description: 'Invoices, weekly.' }, image: { recipe: null } });
    expect(JSON.parse(strFromU8(files['stack/.os/config/canvas.json']!))).toEqual({ version: 1, windows: [{ id: 'w_1', kind: 'table', title: 'Invoices', created_at: 1, updated_at: 1, columns: [], rows: [] }] });

    // Opened with a name of the user's: a stack of its own, with the skill and memory, not the uploads.
    const made = await folders.importStack(new Blob([bytes.slice()]), { appImage: IMAGE, name: 'March inbox', signal: new AbortController().signal });
    expect(made.stack.name).toBe('March inbox');
    expect(made.layout).toBe('{"version":1}');
    expect(await read(`${made.stack.id}/.os/skills/weekly/SKILL.md`)).toContain('name: weekly');
    expect(await read(`${made.stack.id}/.os/memory/user.md`)).toContain('uppercase');
    expect(await read(`${made.stack.id}/documents/invoice.txt`)).toBeNull();
    expect(await read(`${made.stack.id}/.os/vm/machine.json`)).toBeNull();
    // A template file is someone else's: restricted until reviewed. One the app ships is not.
    expect(JSON.parse((await read(`${made.stack.id}/.os/config/trust.json`))!)).toMatchObject({ origin: 'template_file', reviewed_at: null, decisions: {} });
    const shipped = await folders.importStack(new Blob([bytes.slice()]), { appImage: IMAGE, name: 'Shipped', builtIn: true, signal: new AbortController().signal });
    expect(await read(`${shipped.stack.id}/.os/config/trust.json`)).toBeNull();
  });
});

describe('.stack files', () => {
  it('carries every file of a stack into a new one, the databases as their copies, and no secret', async () => {
    const bytes = await exportBytes();
    expect(await everyByte(bytes)).not.toContain(SECRET);
    const names = Object.keys(await unpackStackFile(bytes));
    expect(names[0]).toBe('manifest.json');
    expect(names).not.toContain('stack/.os/config/secrets.json');
    expect(names).not.toContain('stack/.os/memory/memory.db-journal');
    // The export's copies are gone from the stack afterwards.
    expect(await read('default/.os/snapshot/memory.db')).toBeNull();

    const { stack, layout } = await importBytes(bytes);
    expect(stack).toMatchObject({ id: 's-imported1', name: 'Receipts (imported)' });
    expect(layout).toBe('{"state":{"geometry":{}},"version":1}');
    expect(await read('s-imported1/.os/memory/memory.db')).toBe('memory copy');
    expect(await read('s-imported1/.os/memory/transcript.db')).toBe('transcript copy');
    expect(await read('s-imported1/documents/invoice.txt')).toBe('ACME 12.50');
    expect(await read('s-imported1/made-here.txt')).toBe('from the shell');
    expect(await read('s-imported1/.os/memory/user.md')).toContain('uppercase');
    expect(await read('s-imported1/.os/vm/overlay.data')).toBe(await read('default/.os/vm/overlay.data'));
    expect(await read('s-imported1/.os/vm/state.bin')).toBe(await read('default/.os/vm/state.bin'));
    expect(await read('s-imported1/.os/config/secrets.json')).toBeNull();
    // Made elsewhere: restricted until its owner reviews it.
    expect(JSON.parse((await read('s-imported1/.os/config/trust.json'))!)).toMatchObject({ origin: 'stack_file', reviewed_at: null, decisions: {} });
    expect(await read('s-imported1/.os/config/settings.json')).toContain('claude-test');
    expect(JSON.parse((await read('s-imported1/.os/config/stack.json'))!)).toMatchObject({ name: 'Receipts (imported)' });
    expect((await folders.list()).stacks.map((listed) => listed.name)).toEqual(['Receipts', 'Receipts (imported)']);
  });

  it('carries files that are zips themselves, and still opens files of format version 1', async () => {
    // An office document is a zip, stored as it is: its own headers are inside the stack file.
    const inner = zipSync({ 'xl/workbook.xml': strToU8('<workbook/>'), 'xl/sheet1.xml': new Uint8Array(400_000).map((_, i) => (i * 7919) % 251) }, { level: 0 });
    await put('default/documents/sheet.xlsx', inner);
    const { stack } = await importBytes(await exportBytes());
    expect(await read(`${stack.id}/documents/sheet.xlsx`)).toBe(await read('default/documents/sheet.xlsx'));

    // Format version 1: deflate entries streamed with data descriptors (fflate's Zip).
    const files: [string, Uint8Array][] = [
      ['stack/documents/sheet.xlsx', inner],
      ['stack/notes.txt', strToU8('written by format version 1')],
    ];
    const manifest = {
      format: 'stackdocs-stack',
      format_version: 1,
      app_version: '0.1.0',
      created_at: 1,
      stack: { name: 'Old file' },
      image: { recipe: null },
      includes_image: false,
      entries: await Promise.all(files.map(async ([path, data]) => ({ path, size: data.byteLength, sha256: await sha256Hex(data) }))),
    };
    const parts: Uint8Array[] = [];
    const zip = new Zip((_error, data) => void parts.push(data));
    for (const [name, data, deflate] of [['manifest.json', strToU8(JSON.stringify(manifest)), true], ...files.map(([path, data]) => [path, data, path.endsWith('.txt')] as const)] as const) {
      const entry = deflate ? new ZipDeflate(name, { level: 1 }) : new ZipPassThrough(name);
      zip.add(entry);
      entry.push(data, true);
    }
    zip.end();
    const old = await importBytes(new Uint8Array(await new Blob(parts as Uint8Array<ArrayBuffer>[]).arrayBuffer()), IMAGE);
    expect(old.stack.name).toBe('Old file');
    expect(await read(`${old.stack.id}/notes.txt`)).toBe('written by format version 1');
    expect(await read(`${old.stack.id}/documents/sheet.xlsx`)).toBe(await read('default/documents/sheet.xlsx'));
  });

  it('leaves out a saved state that does not match the disk', async () => {
    await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: IMAGE, state: 'g1', disk: null }));
    const files = await unpackStackFile(await exportBytes());
    expect(files['stack/.os/vm/state.bin']).toBeUndefined();
    expect(JSON.parse(strFromU8(files['stack/.os/vm/machine.json']!))).toEqual({ imageHash: IMAGE, state: null, disk: null });
  });

  it('packs the files the closing leaves alone while the stack closes, and takes one changed meanwhile as it is once still', async () => {
    await put('default/documents/changing.txt', 'before-1');
    await put('default/documents/kept.txt', 'kept as it was');
    const stack = await (await stacksDir()).getDirectoryHandle('default');
    const parts: Uint8Array<ArrayBuffer>[] = [];
    const out = new WritableStream<Uint8Array>({ write: (chunk) => void parts.push(chunk.slice()) });
    const written = await exportStack({
      stack,
      name: 'Receipts',
      appVersion: '0.1.0',
      layout: null,
      out,
      signal: new AbortController().signal,
      // The tab closing the stack: its computer saves, and an upload lands meanwhile (same size).
      whenStill: async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        await put('default/documents/changing.txt', 'after--2');
        // Large enough to be packed on two threads, its halves' CRC-32s combined.
        await put('default/.os/vm/state.bin', new Uint8Array(6_000_000).fill(9));
      },
    });
    // settings.json, user.md, invoice.txt, kept.txt, made-here.txt: packed before, unchanged.
    expect(written.prepacked).toBe(5);
    const bytes = new Uint8Array(await new Blob(parts).arrayBuffer());
    const files = await unpackStackFile(bytes);
    expect(strFromU8(files['stack/documents/changing.txt']!)).toBe('after--2');
    expect(strFromU8(files['stack/documents/kept.txt']!)).toBe('kept as it was');
    expect(files['stack/.os/vm/state.bin']!.every((byte) => byte === 9)).toBe(true);
    // Its checksums hold: it opens.
    const made = await importBytes(bytes);
    expect(await read(`${made.stack.id}/documents/kept.txt`)).toBe('kept as it was');
    expect(await read(`${made.stack.id}/documents/changing.txt`)).toBe('after--2');
  });

  it('drops the file when the stack cannot be closed for the export', async () => {
    let aborted: unknown = null;
    const out = new WritableStream<Uint8Array>({ abort: (reason) => void (aborted = reason) });
    const busy = new Error('The agent is working in this stack: wait for it to finish (or stop it), then try again.');
    const failure = folders.exportStack('default', { layout: null, out, appVersion: '0.1.0', signal: new AbortController().signal, whenStill: () => Promise.reject(busy) });
    await expect(failure).rejects.toBe(busy);
    expect(aborted).toBe(busy);
  });

  it('refuses an export of a stack whose databases were not copied for it', async () => {
    await (await (await (await stacksDir()).getDirectoryHandle('default')).getDirectoryHandle('.os')).removeEntry('snapshot', { recursive: true });
    await expect(exportBytes()).rejects.toThrow("The stack's transcript.db was not copied for the export; try again.");
  });

  it('stops at a write that fails (a full disk) and says why, whatever was in flight', async () => {
    // Big enough that the writes run ahead of the packing several times over.
    const noise = new Uint8Array(24 << 20);
    for (let at = 0; at < noise.length; at += 65536) crypto.getRandomValues(noise.subarray(at, at + 65536));
    await put('default/artifacts/noise.bin', noise);
    let accepted = 0;
    const out = new WritableStream<Uint8Array>({
      write(chunk) {
        accepted += chunk.byteLength;
        if (accepted > 5_000_000) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      },
    });
    await expect(folders.exportStack('default', { layout: null, out, appVersion: '0.1.0', signal: new AbortController().signal })).rejects.toThrow(/^"Receipts" was not exported: the browser.s storage for Stackdocs is full/);
  });

  it('refuses each hostile file with its own message and leaves no stack behind', async () => {
    const good = await exportBytes();
    const withEntry = (path: string) =>
      rezip(good, (files, manifest) => {
        files[path] = strToU8('x');
        manifest.entries.push({ path, size: 1, sha256: '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881' });
      });
    expect(await refusal(withEntry('stack/../escaped.txt'))).toBe('This stack file is refused: "stack/../escaped.txt" leaves the stack (a path with "..").');
    expect(await refusal(withEntry('/etc/cron.d/evil'))).toBe('This stack file is refused: "/etc/cron.d/evil" is an absolute path.');
    expect(
      await refusal(
        rezip(good, (files) => {
          files['stack/documents/invoice.txt'] = strToU8('ACME 99.50');
        }),
      ),
    ).toBe('This stack file is damaged: "stack/documents/invoice.txt" does not match its checksum.');
    expect(await refusal(good.slice(0, Math.floor(good.length * 0.6)))).toBe('This stack file ends early: the list of its files, at its end, is missing. It was not copied whole; export it again.');
    expect(
      await refusal(
        rezip(good, (_files, manifest) => {
          manifest.entries.find((entry) => entry.path === 'stack/.os/vm/overlay.data')!.size = 50e12;
        }),
      ),
    ).toMatch(/^The stack was not imported: it needs .* and the browser's storage for Stackdocs has .* left/);
    expect(
      await refusal(
        rezip(good, (files, manifest) => {
          files['stack/documents/bomb.txt'] = new Uint8Array(20_000_000);
          manifest.entries.push({ path: 'stack/documents/bomb.txt', size: 10, sha256: 'a'.repeat(64) });
        }),
      ),
    ).toBe('This stack file is refused: "stack/documents/bomb.txt" unpacks to more than the 10 bytes its manifest declares.');
    expect(
      await refusal(
        rezip(good, (_files, manifest) => {
          manifest.format_version = 3;
        }),
      ),
    ).toBe('This stack file is format version 3; this version of Stackdocs reads format versions 1 and 2 only. Open it in a newer Stackdocs.');
    expect(await refusal(good, '0123456789abcdef')).toBe(
      `This stack's computer runs on system image ${IMAGE}, but this Stackdocs has system image 0123456789abcdef, and the file does not include its image. Open it in a Stackdocs built with image ${IMAGE}.`,
    );
    expect(
      await refusal(
        rezip(good, (files) => {
          files['stack/documents/unlisted.txt'] = strToU8('x');
        }),
      ),
    ).toBe('This stack file is refused: "stack/documents/unlisted.txt" is not in its manifest.');
    expect(await refusal(strToU8('not a zip at all'))).toBe('This is not a Stackdocs stack file: it is not a zip archive.');
  });

  it('stops when cancelled, leaving no stack', async () => {
    const good = await exportBytes();
    const controller = new AbortController();
    controller.abort();
    await expect(folders.importStack(new Blob([good.slice()]), { appImage: IMAGE, signal: controller.signal })).rejects.toThrow('The import was cancelled; no stack was made.');
    expect(await folderNames()).toEqual(['default']);
  });

  it('a stack left unfinished by a killed tab is never listed, and its room is freed', async () => {
    await put('s-half/.os/config/stack.json', JSON.stringify({ name: 'Imported stack', created_at: 2, copying: true }));
    await put('s-half/documents/part.txt', 'half');
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default']);
    expect(await folderNames()).toEqual(['default']);
  });
});
