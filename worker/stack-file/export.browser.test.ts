// What an export carries, in real Chromium OPFS: exactly the entries docs/stack-file.md lists and
// nothing beside them, the MCP servers' keys only when ticked, and the dialog's list of what goes.
import { strFromU8, strToU8, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { unpackStackFile } from '../../tests/support/stack-zip.ts';
import { LEFT_OUT, parseMcpFile } from '../mcp/config.ts';
import type { StackFolders } from '../stack-folders.ts';
import { foldersIn } from './test-folders.ts';
import { exportStack } from './export.ts';
import { exportContents } from './export-plan.ts';
import { sha256Hex } from '../../storage/hash.ts';

const IMAGE = 'fd64fdc78ca0f2c7';
let area = '';
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

const MCP = {
  mcpServers: {
    github: { command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: 'ghp_SECRET_1', LOG: 'debug' } },
    crm: { url: 'https://crm.example.com/mcp', headers: { Authorization: 'Bearer crm-SECRET-2' } },
  },
};

/** A still stack as its worker leaves it after `close {snapshot: true}`, with every file a stack holds beside the ones that travel. */
async function makeStack() {
  await put('default/.os/VERSION', '1\n');
  await put('default/.os/config/stack.json', JSON.stringify({ name: 'Receipts', created_at: 1 }));
  await put('default/.os/config/settings.json', JSON.stringify({ provider: 'anthropic', model: 'claude-test' }));
  await put('default/.os/config/secrets.json', JSON.stringify({ api_key: 'sk-ant-SECRET-3' }));
  await put('default/.os/config/trust.json', JSON.stringify({ version: 1, allowed: ['hooks'] }));
  await put('default/.os/config/mcp.json', JSON.stringify(MCP));
  await put('default/.os/config/hooks.json', JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: 'true' }, { type: 'command', command: 'echo hi' }] }] } }));
  await put('default/.os/config/permissions.json', JSON.stringify({ version: 1, rules: [{ id: 'r1' }, { id: 'r2' }, { id: 'r3' }] }));
  await put('default/.os/skills/weekly/SKILL.md', '---\nname: weekly\n---\n');
  await put('default/.os/memory/user.md', '# User\n');
  // The live databases and the side files SQLite's OPFS VFS keeps beside them, empty.
  for (const db of ['memory', 'transcript']) {
    await put(`default/.os/memory/${db}.db`, 'the live file');
    await put(`default/.os/memory/${db}.db-journal`, '');
    await put(`default/.os/memory/${db}.db-wal`, '');
    await put(`default/.os/snapshot/${db}.db`, `${db} copy`);
  }
  await put('default/.os/checkpoints/c1/state.bin', 'a checkpoint');
  await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: IMAGE, state: 'g1', disk: 'g1' }));
  await put('default/.os/vm/state.bin', new Uint8Array(30_000).fill(7));
  await put('default/.os/vm/overlay.data', new Uint8Array(8192).fill(3));
  await put('default/.os/vm/overlay.map', new Uint8Array(64).fill(1));
  await put('default/documents/invoice.txt', 'ACME 12.50');
  await put('default/documents/scan.txt', 'page');
  // The user's own SQLite files in /workspace are theirs, side files and all.
  await put('default/artifacts/notes.db-wal', 'the user\'s own log');
  await put('default/made-here.txt', 'from the shell');
}

async function exportFile(options: { includeSecrets?: string[]; whenStill?: () => Promise<void> } = {}): Promise<Record<string, Uint8Array>> {
  const parts: Uint8Array<ArrayBuffer>[] = [];
  const out = new WritableStream<Uint8Array>({ write: (chunk) => void parts.push(chunk.slice()) });
  const stack = await (await stacksDir()).getDirectoryHandle('default');
  await exportStack({ stack, name: 'Receipts', appVersion: '0.1.0', layout: '{"version":1}', out, signal: new AbortController().signal, ...options });
  return unpackStackFile(new Uint8Array(await new Blob(parts).arrayBuffer()));
}

beforeEach(async () => {
  area = `export-test-${crypto.randomUUID().slice(0, 8)}`;
  folders = foldersIn(area, stacksDir, { estimate: async () => ({ usage: 1_000_000, quota: 10_000_000_000 }), idPrefix: 's-imported' });
  await makeStack();
});

afterEach(async () => {
  await (await navigator.storage.getDirectory()).removeEntry(area, { recursive: true }).catch(() => {});
});

describe('an export', () => {
  it('holds the entries docs/stack-file.md lists and nothing else: no database side file, trust record, secret, record, copy or checkpoint', async () => {
    const files = await exportFile();
    expect(Object.keys(files)).toEqual([
      'manifest.json',
      'layout.json',
      'stack/.os/VERSION',
      'stack/.os/config/hooks.json',
      'stack/.os/config/mcp.json',
      'stack/.os/config/permissions.json',
      'stack/.os/config/settings.json',
      'stack/.os/memory/user.md',
      'stack/.os/skills/weekly/SKILL.md',
      'stack/.os/vm/machine.json',
      'stack/.os/vm/overlay.data',
      'stack/.os/vm/overlay.map',
      'stack/.os/vm/state.bin',
      'stack/artifacts/notes.db-wal',
      'stack/documents/invoice.txt',
      'stack/documents/scan.txt',
      'stack/made-here.txt',
      'stack/.os/memory/transcript.db',
      'stack/.os/memory/memory.db',
      'checksums.json',
    ]);
    const manifest = JSON.parse(strFromU8(files['manifest.json']!)) as { entries: { path: string }[] };
    expect(manifest.entries.map((entry) => entry.path)).toEqual(Object.keys(files).filter((name) => name !== 'manifest.json' && name !== 'checksums.json'));
    expect(strFromU8(files['stack/.os/memory/memory.db']!)).toBe('memory copy');
  });

  it("leaves out every MCP server's header and env value unless ticked, marking each as one to fill in; the stack keeps its own", async () => {
    const contents = await exportContents(await (await stacksDir()).getDirectoryHandle('default'));
    expect(contents.secrets.map((secret) => secret.label)).toEqual(["MCP server 'github': env GITHUB_TOKEN", "MCP server 'github': env LOG", "MCP server 'crm': header Authorization"]);

    // Packed while the stack closes, too: the file on disk is never what goes.
    const plain = await exportFile({ whenStill: async () => new Promise((resolve) => setTimeout(resolve, 100)) });
    const text = strFromU8(plain['stack/.os/config/mcp.json']!);
    expect(text).not.toContain('SECRET');
    expect(parseMcpFile(text).mcpServers).toEqual({
      github: { command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: LEFT_OUT, LOG: LEFT_OUT } },
      crm: { url: 'https://crm.example.com/mcp', headers: { Authorization: LEFT_OUT } },
    });
    expect(JSON.parse((await read('default/.os/config/mcp.json'))!)).toEqual(MCP);

    // Ticked, through the stacks worker's own path: that value goes, the others still do not.
    const ticked = contents.secrets.find((secret) => secret.label.endsWith('GITHUB_TOKEN'))!.id;
    const parts: Uint8Array<ArrayBuffer>[] = [];
    const out = new WritableStream<Uint8Array>({ write: (chunk) => void parts.push(chunk.slice()) });
    await folders.exportStack('default', { layout: null, out, appVersion: '0.1.0', signal: new AbortController().signal, includeSecrets: [ticked] });
    const bytes = new Uint8Array(await new Blob(parts).arrayBuffer());
    const carried = parseMcpFile(strFromU8((await unpackStackFile(bytes))['stack/.os/config/mcp.json']!)).mcpServers;
    expect(carried.github).toMatchObject({ env: { GITHUB_TOKEN: 'ghp_SECRET_1', LOG: LEFT_OUT } });
    expect(carried.crm).toMatchObject({ headers: { Authorization: LEFT_OUT } });
    // It opens as a stack whose servers say what they need.
    const { stack } = await folders.importStack(new Blob([bytes]), { appImage: IMAGE, signal: new AbortController().signal });
    expect(JSON.parse((await read(`${stack.id}/.os/config/mcp.json`))!).mcpServers.crm.headers.Authorization).toBe(LEFT_OUT);
    // Its trust record is this browser's new one, not the exported stack's.
    expect(JSON.parse((await read(`${stack.id}/.os/config/trust.json`))!)).toMatchObject({ origin: 'stack_file', reviewed_at: null, decisions: {} });
  });

  it("leaves the computer's files out when its first start never finished (no image named), so the file opens anywhere", async () => {
    await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: null, state: null, disk: 'g1' }));
    const files = await exportFile();
    expect(Object.keys(files).filter((name) => name.startsWith('stack/.os/vm/'))).toEqual([]);
    expect(JSON.parse(strFromU8(files['manifest.json']!))).toMatchObject({ image: { recipe: null } });
    const parts = Object.fromEntries(Object.entries(files));
    const { stack } = await folders.importStack(new Blob([zipSync(parts)]), { appImage: IMAGE, signal: new AbortController().signal });
    expect(await read(`${stack.id}/.os/vm/overlay.data`)).toBeNull();
  });

  it('a file that brings a trust record of its own is refused, and leaves no stack', async () => {
    const trust = strToU8(JSON.stringify({ version: 1, allowed: ['hooks', 'mcp', 'tasks'] }));
    const manifest = { format: 'stackdocs-stack', format_version: 2, app_version: '0.1.0', created_at: 1, stack: { name: 'Trust me' }, image: { recipe: null }, includes_image: false, entries: [{ path: 'stack/.os/config/trust.json', size: trust.byteLength, sha256: await sha256Hex(trust) }] };
    const bytes = zipSync({ 'manifest.json': strToU8(JSON.stringify(manifest)), 'stack/.os/config/trust.json': trust });
    await expect(folders.importStack(new Blob([bytes]), { appImage: IMAGE, signal: new AbortController().signal })).rejects.toThrow('This stack file is refused: "stack/.os/config/trust.json" is a file a stack never takes from outside.');
    expect((await folders.list()).stacks.map((stack) => stack.id)).toEqual(['default']);
  });

  it('is listed before it is written: each part with its size, in plain words', async () => {
    await put('default/.os/vm/machine.json', JSON.stringify({ imageHash: IMAGE, state: 'g1', disk: 'g2' }));
    const contents = await folders.exportContents('default');
    const size = async (...paths: string[]) => (await Promise.all(paths.map(async (path) => new Blob([(await read(`default/${path}`))!]).size))).reduce((sum, bytes) => sum + bytes, 0);
    expect(contents.parts.map((part) => [part.kind, part.label, part.files, part.bytes])).toEqual([
      ['conversation', 'The conversation and its history', 1, await size('.os/memory/transcript.db')],
      ['memory', "Memory: its files, what the agent learned, the documents' records and the scheduled tasks", 2, await size('.os/memory/memory.db', '.os/memory/user.md')],
      ['files', '/workspace/artifacts/: 1 file', 1, await size('artifacts/notes.db-wal')],
      ['files', '/workspace/documents/: 2 files', 2, await size('documents/invoice.txt', 'documents/scan.txt')],
      ['files', 'Files at the top of /workspace: 1 file', 1, await size('made-here.txt')],
      // The saved state does not belong to this disk: it stays behind.
      ['computer', "The computer's disk and its saved state (what it was running)", 3, 8192 + 64 + (await size('.os/vm/machine.json'))],
      ['settings', 'Settings (model, endpoint, heartbeat, scans) and the windows on the canvas', 2, await size('.os/VERSION', '.os/config/settings.json')],
      ['skills', 'Skills: weekly', 1, await size('.os/skills/weekly/SKILL.md')],
      ['rules', 'Permission rules: 3 rules', 1, await size('.os/config/permissions.json')],
      ['hooks', 'Hooks (commands run in the computer): 2 commands', 1, await size('.os/config/hooks.json')],
      ['mcp', 'MCP servers: github, crm', 1, await size('.os/config/mcp.json')],
    ]);
    expect(contents.parts.every((part) => part.bytes_known)).toBe(true);
    expect(contents.secrets).toHaveLength(3);
  });
});
