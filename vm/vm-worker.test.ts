// VmApi over a fake OPFS (in memory) and a fake emulator: first start, boot, suspend, wake, image
// change, quota, the shared base and its offline download.
import { gzipSync } from 'node:zlib';
import * as Comlink from 'comlink';
import { describe, expect, it, vi } from 'vitest';
import type { SyncAccessHandleLike } from './disk.ts';
import { fakeEmulatorFactory, type FakeEmulator } from './testing/fake-guest.ts';
import { BaseChunks } from './disk/base-chunks.ts';
import { ImageError } from './image.ts';
import { sha256Hex } from '../storage/hash.ts';
import type { VmStatus } from './protocol.ts';
import { toVmError } from './api/errors.ts';
import { createVmApi } from './vm-worker.ts';

class MemFile {
  data = new Uint8Array(0);
  quotaAt = Infinity;
  /** As a File reports it: when its last writable closed (partial writes are swept by age). */
  modified = Date.now();
  handle(): SyncAccessHandleLike {
    return {
      read: (buf, o) => {
        const at = o?.at ?? 0;
        const part = this.data.subarray(at, at + buf.length);
        buf.set(part);
        return part.length;
      },
      write: (buf, o) => {
        const at = o?.at ?? 0;
        if (at + buf.length > this.quotaAt) throw new DOMException('full', 'QuotaExceededError');
        if (at + buf.length > this.data.length) this.resize(at + buf.length);
        this.data.set(buf, at);
        return buf.length;
      },
      flush: () => {},
      getSize: () => this.data.length,
      truncate: (n) => this.resize(n),
      close: () => {},
    };
  }
  private resize(n: number) {
    const next = new Uint8Array(n);
    next.set(this.data.subarray(0, n));
    this.data = next;
  }
}

class MemDir {
  dirs = new Map<string, MemDir>();
  files = new Map<string, MemFile>();
  /** While set, a file written in this folder lands only once it settles (a slow disk). */
  holdWrites: Promise<void> | null = null;
  async getDirectoryHandle(name: string, o?: { create?: boolean }) {
    if (!this.dirs.has(name)) {
      if (!o?.create) throw new DOMException('missing', 'NotFoundError');
      this.dirs.set(name, new MemDir());
    }
    return this.dirs.get(name)!;
  }
  async getFileHandle(name: string, o?: { create?: boolean }) {
    if (!this.files.has(name)) {
      if (!o?.create) throw new DOMException('missing', 'NotFoundError');
      this.files.set(name, new MemFile());
    }
    const file = this.files.get(name)!;
    const dir = this;
    let current = name;
    return {
      kind: 'file' as const,
      createSyncAccessHandle: async () => {
        await dir.holdWrites; // a slow disk: a file opened for writing now lands once it settles
        return file.handle();
      },
      getFile: async () => new File([file.data as Uint8Array<ArrayBuffer>], current, { lastModified: file.modified }),
      // Like OPFS: the bytes land on close, at the positions written, within the size truncated to.
      createWritable: async () => {
        let next: Uint8Array<ArrayBuffer> = new Uint8Array(0);
        let at = 0;
        const put = (data: ArrayBuffer | Uint8Array, position: number) => {
          const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
          if (position + bytes.length > file.quotaAt) throw new DOMException('full', 'QuotaExceededError');
          if (position + bytes.length > next.length) next = grown(next, position + bytes.length);
          next.set(bytes, position);
          at = position + bytes.length;
        };
        return {
          write: async (d: string | ArrayBuffer | Uint8Array | { type: 'write'; position: number; data: ArrayBuffer | Uint8Array }) =>
            typeof d === 'string' ? put(new TextEncoder().encode(d), at) : 'type' in d ? put(d.data, d.position) : put(d, at),
          truncate: async (size: number) => {
            if (size > file.quotaAt) throw new DOMException('full', 'QuotaExceededError');
            next = grown(next, size).subarray(0, size);
          },
          close: async () => {
            await dir.holdWrites;
            file.data = next;
            file.modified = Date.now();
          },
          abort: async () => {},
        };
      },
      // Within one folder, replacing a file of that name (as Chromium's OPFS does).
      move: async (newName: string) => {
        dir.files.delete(current);
        dir.files.set(newName, file);
        current = newName;
      },
    };
  }
  async removeEntry(name: string) {
    if (!this.files.delete(name) && !this.dirs.delete(name)) throw new DOMException('missing', 'NotFoundError');
  }
  async *keys() {
    yield* this.files.keys();
  }
  async *entries(): AsyncGenerator<[string, { kind: 'file' | 'directory' }]> {
    for (const [name, dir] of this.dirs) yield [name, Object.assign(dir, { kind: 'directory' as const })];
    for (const name of [...this.files.keys()]) yield [name, await this.getFileHandle(name)];
  }
}

function grown(bytes: Uint8Array<ArrayBuffer>, size: number): Uint8Array<ArrayBuffer> {
  if (size <= bytes.length) return bytes;
  const out = new Uint8Array(size);
  out.set(bytes);
  return out;
}

async function image(recipeHash: string, wakeSet?: number[], blocks = 4, held?: { raw: Uint8Array; delayMs: number }) {
  const chunkSize = 4096;
  const raw = new Uint8Array(chunkSize).fill(7);
  const sha = await sha256Hex(raw);
  const served = new Map<string, Uint8Array>([[`disk/${sha}.gzip`, gzipSync(raw)], ['f', new Uint8Array([1])]]);
  const f = { file: 'f', size: 1, sha256: await sha256Hex(new Uint8Array([1])) };
  const manifest = {
    format: 1, recipeHash, cmdline: 'x', memoryMiB: 64,
    agent: { protocol: 1, virtioConsolePort: 1, guestDevice: '/dev/hvc1' },
    files: { kernel: f, initrd: f, bios: f, vgaBios: f },
    disk: { size: blocks * chunkSize, chunkSize, compression: 'gzip', chunks: [{ index: 1, sha256: sha, file: `disk/${sha}.gzip`, compressedSize: 30 }], ...(wakeSet ? { wakeSet } : {}) },
    ...(held ? { bootState: { file: 'bootstate.gzip', size: held.raw.length, sha256: await sha256Hex(held.raw), compressedSize: 0 } } : {}),
  };
  if (held) served.set('bootstate.gzip', gzipSync(held.raw));
  served.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
  const requests: string[] = [];
  return async (url: string) => {
    requests.push(url);
    if (held && url.endsWith('bootstate.gzip')) await new Promise((resolve) => setTimeout(resolve, held.delayMs));
    const body = served.get(url.replace(/^img\//, ''));
    return body ? new Response(body as Uint8Array<ArrayBuffer>) : new Response('', { status: 404 });
  };
}

function makeApi(root: MemDir, fetchFn: (url: string) => Promise<Response>, created: FakeEmulator[] = [], checkpointAfterMs = 0, bootStateWaitMs?: number, suspendAfterMs = 0) {
  return createVmApi({
    ...(bootStateWaitMs !== undefined ? { bootStateWaitMs } : {}),
    storageRoot: async () => root as unknown as FileSystemDirectoryHandle,
    fetch: fetchFn as typeof fetch,
    wasmPath: 'v86.wasm',
    createEmulator: fakeEmulatorFactory(created),
    checkpointAfterMs,
    suspendAfterMs,
  });
}

/** A VmApi over a new fake OPFS, started on a stack, saving after 50 ms of quiet: its root, the API, its emulator. */
async function startedApi(blocks?: number) {
  const root = new MemDir();
  const created: FakeEmulator[] = [];
  const api = makeApi(root, await image('h1', undefined, blocks), created, 50);
  await api.start({ imageBaseUrl: 'img', stackId: 's1' });
  return { root, api, emulator: created.at(-1)! };
}

const vmDir = (root: MemDir) => root.dirs.get('stacks')!.dirs.get('s1')!.dirs.get('.os')!.dirs.get('vm')!;
const baseFiles = (root: MemDir) => [...(root.dirs.get('base')?.files.keys() ?? [])];
const meta = (root: MemDir) => JSON.parse(new TextDecoder().decode(vmDir(root).files.get('machine.json')!.data)) as Record<string, unknown>;

/** Runs `act` on a fake clock, then lets 16 s pass: past the quiet time and the 15 s between saves. */
async function afterQuietTime(act: () => Promise<unknown>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    await act();
    await vi.advanceTimersByTimeAsync(16_000);
  } finally {
    vi.useRealTimers();
  }
}

describe('toVmError', () => {
  it("says what is missing and what to do when the image cannot be fetched, not the file's address", () => {
    const unreachable = toVmError(new ImageError('fetch_failed', 'could not fetch http://127.0.0.1:5173/vm/fd64fdc78ca0f2c7/disk/0a1b.gzip', { cause: new TypeError('Failed to fetch') }));
    expect(unreachable).toEqual({
      code: 'image_fetch_failed',
      message: "part of its system image is not in this browser yet and could not be fetched (the image's server cannot be reached); connect to the internet and start it again",
      retryable: true,
    });
    expect(toVmError(new ImageError('fetch_failed', 'could not fetch http://x/vm/a/bzImage: HTTP 404')).message).toContain("(the image's server answered HTTP 404)");
    expect(toVmError(new ImageError('checksum', 'the kernel is corrupt'))).toEqual({ code: 'image_checksum', message: 'the kernel is corrupt', retryable: false });
  });
});

describe('VmApi (fake OPFS, fake emulator)', () => {
  it('starts a stack on an empty overlay over the shared image, boots, runs, suspends, and wakes in a new worker', async () => {
    const root = new MemDir();
    const fetchFn = await image('h1', [1]);
    const api = makeApi(root, fetchFn);
    const statuses: VmStatus[] = [];
    const started = await api.start({ imageBaseUrl: 'img', stackId: 's1' }, (s) => statuses.push(s));
    expect(started).toEqual({ ok: true, value: 'booted' });
    // The wake set is fetched before the start, into the base every stack shares.
    expect(statuses.filter((s) => s.state === 'downloading').at(-1)).toMatchObject({ reason: 'first_start', chunksDone: 1, chunksTotal: 1 });
    expect(baseFiles(root)).toHaveLength(1);
    expect(vmDir(root).files.get('overlay.map')!.data.length).toBe(64); // nothing written yet
    expect(vmDir(root).files.has('disk.img')).toBe(false);
    expect(meta(root).imageHash).toBe('h1');

    const out: string[] = [];
    const r = await api.exec('x1', { command: 'echo hello' }, (stream, b) => out.push(`${stream}:${new TextDecoder().decode(b)}`));
    expect(r).toMatchObject({ ok: true, value: { code: 0, stdout: 'hello\n' } });
    expect(out).toEqual(['stdout:hello\n']);
    expect(await api.suspend()).toEqual({ ok: true, value: undefined });
    expect(meta(root).state).toBe(meta(root).disk);

    const created: FakeEmulator[] = [];
    const again = makeApi(root, fetchFn, created);
    expect(await again.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'woke' });
    expect(created[0]!.options.initial_state).toBeDefined();
    await again.shutdown();
  });

  it('a cold boot restores the image\'s boot state, kept in the shared base; one slower to come than the wait boots the kernel and is kept for next time', async () => {
    const raw = new Uint8Array(5000).fill(3);
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1', undefined, 4, { raw, delayMs: 0 }), created, 0, 1000);
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'booted' });
    expect(new Uint8Array(created[0]!.restored!)).toEqual(raw);
    expect(created[0]!.serialSent).toEqual(['\n']);
    expect(baseFiles(root)).toContain(await sha256Hex(raw));
    await api.shutdown();

    const slowRoot = new MemDir();
    const slow: FakeEmulator[] = [];
    const later = makeApi(slowRoot, await image('h1', undefined, 4, { raw, delayMs: 200 }), slow, 0, 20);
    expect(await later.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'booted' });
    expect(slow.map((e) => (e.options.bzimage ? 'kernel' : 'held'))).toEqual(['kernel']);
    const sha = await sha256Hex(raw);
    expect(baseFiles(slowRoot)).not.toContain(sha);
    await vi.waitFor(() => expect(baseFiles(slowRoot)).toContain(sha), { timeout: 2000 });
    await later.shutdown();
  });

  it('refills the disk when the image changed, and cold boots', async () => {
    const root = new MemDir();
    const api = makeApi(root, await image('h1'));
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    await api.suspend();
    const statuses: VmStatus[] = [];
    const next = makeApi(root, await image('h2'));
    expect(await next.start({ imageBaseUrl: 'img', stackId: 's1' }, (s) => statuses.push(s))).toEqual({ ok: true, value: 'booted' });
    expect(statuses.find((s) => s.state === 'downloading')).toMatchObject({ reason: 'image_changed' });
    expect(meta(root).imageHash).toBe('h2');
    await next.shutdown();
  });

  it('a full storage during the fill is a clear error and leaves no valid-looking disk', async () => {
    const root = new MemDir();
    const dir = await (await root.getDirectoryHandle('stacks', { create: true })).getDirectoryHandle('s1', { create: true });
    const vm = await (await dir.getDirectoryHandle('.os', { create: true })).getDirectoryHandle('vm', { create: true });
    await vm.getFileHandle('overlay.data', { create: true });
    vm.files.get('overlay.data')!.quotaAt = 1500;
    const api = makeApi(root, await image('h1'));
    const r = await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    expect(r).toMatchObject({ ok: false, error: { code: 'image_quota', message: expect.stringMatching(/storage is full/) } });
    expect(meta(root).imageHash).toBeNull();
  });

  it('a stack from before the disk had layers starts over on the shared image and drops its raw disk', async () => {
    const root = new MemDir();
    const dir = await (await root.getDirectoryHandle('stacks', { create: true })).getDirectoryHandle('s1', { create: true });
    const vm = await (await dir.getDirectoryHandle('.os', { create: true })).getDirectoryHandle('vm', { create: true });
    await vm.getFileHandle('disk.img', { create: true });
    vm.files.get('disk.img')!.data = new Uint8Array(8192).fill(1);
    await vm.getFileHandle('machine.json', { create: true });
    vm.files.get('machine.json')!.data = new TextEncoder().encode(JSON.stringify({ imageHash: 'old', state: 'g', disk: 'g' }));
    const statuses: VmStatus[] = [];
    const api = makeApi(root, await image('h1'));
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' }, (s) => statuses.push(s))).toEqual({ ok: true, value: 'booted' });
    expect(statuses.find((s) => s.state === 'downloading')).toMatchObject({ reason: 'image_changed' });
    expect(vm.files.has('disk.img')).toBe(false);
    await api.shutdown();
  });

  it('downloads the rest of the image for offline use, with progress, without starting the computer', async () => {
    const root = new MemDir();
    const api = makeApi(root, await image('h1'));
    const seen: string[] = [];
    await api.subscribeAvailability((a) => seen.push(`${a.state} ${a.chunksDone}/${a.chunksTotal}`));
    const result = await api.makeAvailableOffline('img');
    expect(result).toEqual({ ok: true, value: expect.objectContaining({ state: 'complete', chunksDone: 1, chunksTotal: 1 }) });
    expect(seen).toEqual(['downloading 0/1', 'complete 1/1', 'complete 1/1']);
    expect(baseFiles(root)).toHaveLength(1);
  });

  it('saves on request only what changed since the last save (the page is being hidden)', async () => {
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1'), created, 60_000);
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    const emulator = created.at(-1)!;
    expect(await api.checkpoint(true)).toEqual({ ok: true, value: undefined });
    expect(emulator.saves).toBe(0); // nothing ran since the boot
    await api.exec('x1', { command: 'echo hello' });
    expect(await api.checkpoint(true)).toEqual({ ok: true, value: undefined });
    expect(emulator.saves).toBe(1);
    expect(meta(root).state).toBe(meta(root).disk);
    await api.checkpoint(true);
    expect(emulator.saves).toBe(1); // saved already: the quiet-time save was cancelled too
    await api.checkpoint();
    expect(emulator.saves).toBe(2);
    await api.suspend();
  });

  it('suspends without saving again when nothing happened since its last save; a command, a keystroke, terminal output or a disk write since means a save', async () => {
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1', undefined, 8), created, 60_000);
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    // A cold boot is never as saved.
    await api.suspend();
    expect(created.at(-1)!.saves).toBe(1);
    const saved = meta(root).state;
    expect(saved).toBe(meta(root).disk);

    // Woken and left alone: it stops as it was saved, and wakes from that state again.
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'woke' });
    await api.suspend();
    expect(created.at(-1)!.saves).toBe(0);
    expect(meta(root)).toMatchObject({ state: saved, disk: saved });
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'woke' });

    // Saved after a command (the quiet-time save, or a checkpoint): as saved again.
    await api.exec('x1', { command: 'echo hello' });
    await api.checkpoint();
    const afterCommand = meta(root).state;
    expect(afterCommand).not.toBe(saved);
    await api.suspend();
    expect(created.at(-1)!.saves).toBe(1);
    expect(meta(root).state).toBe(afterCommand);

    const touches: [string, (emulator: FakeEmulator) => Promise<unknown>][] = [
      ['a command', () => api.exec('x2', { command: 'echo again' })],
      ['a keystroke', () => api.terminalInput(new TextEncoder().encode('l'))],
      ['terminal output', async (emulator) => emulator.fire('serial0-output-byte', 0x41)],
      ['a disk write', (emulator) => new Promise<void>((resolve) => (emulator.options.hda as { set(offset: number, bytes: Uint8Array, done: () => void): void }).set(0, new Uint8Array(4096).fill(5), resolve))],
    ];
    for (const [touch, act] of touches) {
      expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' }), touch).toEqual({ ok: true, value: 'woke' });
      const before = meta(root).state;
      await act(created.at(-1)!);
      await api.suspend();
      expect(created.at(-1)!.saves, touch).toBe(1);
      expect(meta(root).state, touch).not.toBe(before);
      expect(meta(root).state, touch).toBe(meta(root).disk);
    }
    // A terminal resize alone is not: the page sends the size again whenever the computer comes up.
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    const before = meta(root).state;
    await api.terminalResize(100, 30);
    await api.suspend();
    expect(created.at(-1)!.saves).toBe(0);
    expect(meta(root).state).toBe(before);
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
  });

  it('captures the computer for a checkpoint: saved, its whole disk overlay first, then only what changed', async () => {
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1', undefined, 32), created, 60_000);
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    const emulator = created.at(-1)!;
    const disk = emulator.options.hda as { set(offset: number, bytes: Uint8Array, done: () => void): void };
    const write = (block: number, fill: number) => new Promise<void>((resolve) => disk.set(block * 4096, new Uint8Array(4096).fill(fill), resolve));
    await write(0, 1);
    await write(2, 2);
    await api.exec('x1', { command: 'echo hello' });

    const first = await api.capture(null);
    if (!first.ok || !first.value) throw new Error('no capture');
    expect(emulator.saves).toBe(1); // something ran: saved, the disk copied while stopped
    expect(first.value).toMatchObject({ full: true, stateUnchanged: false, dataSize: 4096 + 2 * 4096 });
    expect(first.value.state?.byteLength).toBe(8);
    expect(first.value.meta.state).toBe(first.value.meta.disk);
    // The workspace journal taken with that save comes with it (its file may still be being written).
    expect(JSON.parse(new TextDecoder().decode(first.value.journal!))).toMatchObject({ generation: first.value.meta.state });
    expect(first.value.chunks.map((chunk) => chunk.index)).toEqual([0]);
    expect(first.value.map.byteLength).toBe(64 + 2 * 4);

    // Nothing ran since: no save, the state is the one captured, no disk chunk copied.
    const quiet = await api.capture(first.value.token);
    if (!quiet.ok || !quiet.value) throw new Error('no capture');
    expect(emulator.saves).toBe(1);
    expect(quiet.value).toMatchObject({ full: false, stateUnchanged: true, state: null, journal: null, chunks: [] });

    // 20 more blocks (a second 64 KiB chunk of the data file), then a rewrite of block 0.
    for (let block = 3; block < 23; block++) await write(block, 3);
    await write(0, 9);
    await api.exec('x2', { command: 'echo again' });
    const next = await api.capture(quiet.value.token);
    if (!next.ok || !next.value) throw new Error('no capture');
    expect(emulator.saves).toBe(2);
    expect(next.value.full).toBe(false);
    expect(next.value.chunks.map((chunk) => chunk.index)).toEqual([0, 1]);
    expect(next.value.chunks[0]!.bytes[4096]).toBe(9); // block 0's slot, after the data file's header

    // A token it did not give (another tab's, or before a reset): the whole overlay.
    const other = await api.capture('not-mine');
    expect(other.ok && other.value?.full).toBe(true);
    await api.suspend();
  });

  it('moves a capture to the caller rather than copying it (the state is tens of MB)', async () => {
    const api = makeApi(new MemDir(), await image('h1', undefined, 32), [], 60_000);
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    await api.exec('x1', { command: 'echo hello' });
    // The API as the stack worker reaches it: through Comlink over a message channel.
    const { port1, port2 } = new MessageChannel();
    const sent: Transferable[][] = [];
    const post = port1.postMessage.bind(port1);
    port1.postMessage = ((message: unknown, transfer?: Transferable[]) => {
      sent.push(transfer ?? []);
      post(message, transfer ?? []);
    }) as typeof port1.postMessage;
    Comlink.expose(api, port1 as unknown as Comlink.Endpoint);
    const remote = Comlink.wrap<typeof api>(port2 as unknown as Comlink.Endpoint);
    try {
      const captured = await remote.capture(null);
      if (!captured.ok || !captured.value) throw new Error('no capture');
      expect(captured.value.state?.byteLength).toBe(8);
      // The state, the journal, the map and the disk chunk: each moved, none copied.
      expect(sent.flat().filter((item) => item instanceof ArrayBuffer)).toHaveLength(3 + captured.value.chunks.length);
    } finally {
      port1.close();
      port2.close();
    }
    await api.suspend();
  });

  it('captures with the state of a quiet-time save still being written, not waiting for its write', async () => {
    const { root, api, emulator } = await startedApi();
    const before = meta(root).state;
    let release = () => {};
    vmDir(root).holdWrites = new Promise<void>((resolve) => (release = resolve));
    await afterQuietTime(() => api.exec('x1', { command: 'echo hello' }));
    await vi.waitFor(() => expect(emulator.saves).toBe(1));
    // Its state is taken, its write held (a slow disk): the capture does not wait for it.
    const captured = await Promise.race([api.capture(null), new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000))]);
    if (!captured?.ok || !captured.value) throw new Error(`the capture waited for the state's write: ${JSON.stringify(captured)}`);
    expect(emulator.saves).toBe(1);
    expect(meta(root).state).toBe(before); // still being written
    expect(captured.value.meta.state).not.toBe(before);
    expect(captured.value.meta.state).toBe(captured.value.meta.disk);
    expect(captured.value.state?.byteLength).toBe(8);
    release();
    vmDir(root).holdWrites = null;
    await vi.waitFor(() => expect(meta(root).state).toBe(captured.value!.meta.state));
    await api.suspend();
  });

  it('saves for a capture after a quiet-time save ended its write when the guest wrote its disk since', async () => {
    const { root, api, emulator } = await startedApi(8);
    let release = () => {};
    vmDir(root).holdWrites = new Promise<void>((resolve) => (release = resolve));
    await afterQuietTime(() => api.exec('x1', { command: 'echo hello' }));
    await vi.waitFor(() => expect(emulator.saves).toBe(1));
    const disk = emulator.options.hda as { set(offset: number, bytes: Uint8Array, done: () => void): void };
    await new Promise<void>((resolve) => disk.set(0, new Uint8Array(4096).fill(5), resolve));
    let done = false;
    const capturing = api.capture(null).then((result) => ((done = true), result));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(done).toBe(false); // a save now would race the write under way
    release();
    vmDir(root).holdWrites = null;
    const captured = await capturing;
    expect(captured.ok && captured.value?.meta.state).toBeTruthy();
    expect(emulator.saves).toBe(2);
    await api.suspend();
  });

  it('gives back the disk chunks kept in memory once the guest has read nothing from its disk a while, once until it reads again', async () => {
    const trim = vi.spyOn(BaseChunks.prototype, 'trim');
    try {
      const root = new MemDir();
      const created: FakeEmulator[] = [];
      const api = createVmApi({ storageRoot: async () => root as unknown as FileSystemDirectoryHandle, fetch: (await image('h1', undefined, 8)) as typeof fetch, wasmPath: 'v86.wasm', createEmulator: fakeEmulatorFactory(created), diskQuietMs: 1500 });
      await api.start({ imageBaseUrl: 'img', stackId: 's1' });
      const disk = created.at(-1)!.options.hda as { get(offset: number, length: number, done: (bytes: Uint8Array) => void): void };
      const read = () => new Promise<void>((resolve) => disk.get(4096, 512, () => resolve()));
      // Reading on: kept.
      for (let i = 0; i < 5; i++) {
        await read();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(trim).not.toHaveBeenCalled();
      // Quiet: given back, once.
      await vi.waitFor(() => expect(trim).toHaveBeenCalledTimes(1), { timeout: 4000 });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(trim).toHaveBeenCalledTimes(1);
      // A read, then quiet again: once more.
      await read();
      await vi.waitFor(() => expect(trim).toHaveBeenCalledTimes(2), { timeout: 4000 });
      await api.suspend();
    } finally {
      trim.mockRestore();
    }
  });

  it('saves itself after quiet time again once a checkpoint captured it', async () => {
    const { api, emulator } = await startedApi();
    await api.exec('x1', { command: 'echo hello' });
    const captured = await api.capture(null);
    expect(captured.ok).toBe(true);
    const saves = emulator.saves;
    // At most one save every 15 s: the one after this command comes when that has passed.
    await afterQuietTime(() => api.exec('x2', { command: 'echo later' }));
    await vi.waitFor(() => expect(emulator.saves).toBe(saves + 1));
    await api.suspend();
  });

  it('saves itself after quiet time when the guest wrote its disk on its own (no command, no keystroke)', async () => {
    const { root, api, emulator } = await startedApi(8);
    const disk = emulator.options.hda as { set(offset: number, bytes: Uint8Array, done: () => void): void };
    const saves = emulator.saves;
    await afterQuietTime(async () => {
      await new Promise<void>((resolve) => disk.set(0, new Uint8Array(4096).fill(5), resolve));
      expect(meta(root).disk).toBeNull(); // the saved state no longer matches the disk
    });
    await vi.waitFor(() => expect(emulator.saves).toBe(saves + 1));
    expect(meta(root).state).toBe(meta(root).disk);
    await api.suspend();
  });

  it('counts the network card’s traffic over a boot, a suspend and a wake, and none while it runs offline', async () => {
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1'), created);
    const network = { relayUrl: 'ws://proxy.test/v1/wisp?ticket=t', dnsUrl: 'http://proxy.test/dns-query', ticket: 't' };
    expect(await api.networkTraffic()).toEqual({ sent: 0, received: 0 });
    await api.start({ imageBaseUrl: 'img', stackId: 's1', network });
    created.at(-1)!.fire('eth-transmit-end', [74]);
    created.at(-1)!.fire('eth-receive-end', [1514]);
    await api.suspend();
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1', network })).toEqual({ ok: true, value: 'woke' });
    created.at(-1)!.fire('eth-receive-end', [60]);
    expect(await api.networkTraffic()).toEqual({ sent: 74, received: 1574 });
    // Offline, what the card sends goes nowhere: not counted as used.
    await api.suspend();
    await api.start({ imageBaseUrl: 'img', stackId: 's1', network: null });
    expect(created).toHaveLength(3);
    created.at(-1)!.fire('eth-transmit-end', [90]);
    expect(await api.networkTraffic()).toEqual({ sent: 74, received: 1574 });
    await api.shutdown();
  });

  it('a server started in the background gets the stdin written before the guest had it, in order', async () => {
    const root = new MemDir();
    const api = makeApi(root, await image('h1', [1]));
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    // A file change still being loaded: the exec waits for it before reaching the guest.
    void api.workspaceChanged('notes/a.txt');
    const out: string[] = [];
    const running = api.exec('svc1', { command: 'cat', stdin: 'pipe' }, (stream, b) => out.push(`${stream}:${new TextDecoder().decode(b)}`), { background: true });
    void api.writeStdin('svc1', new TextEncoder().encode('{"jsonrpc":"2.0",'), false);
    void api.writeStdin('svc1', new TextEncoder().encode('"id":0}\n'), true);
    expect(await running).toMatchObject({ ok: true, value: { code: 0 } });
    // Only streamed: a server's output is not kept for its result.
    expect((await running).ok && (await running as { value: { stdout?: string } }).value.stdout).toBeUndefined();
    expect(out.join('')).toBe('stdout:{"jsonrpc":"2.0","id":0}\n');
    await api.shutdown();
  });

  it('rests (suspends) only with nothing running in it: a server or a terminal job keeps it up', async () => {
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1', [1]), created);
    expect(await api.rest()).toEqual({ ok: true, value: false }); // not started
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    const server = api.exec('svc1', { command: 'cat', stdin: 'pipe' }, () => {}, { background: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await api.rest()).toEqual({ ok: true, value: false });
    void api.writeStdin('svc1', new Uint8Array(0), true);
    expect(await server).toMatchObject({ ok: true, value: { code: 0 } });
    // A job the user left running in the terminal keeps it up too.
    const guest = created.at(-1)!.guest;
    guest.terminalJob = true;
    expect(await api.rest()).toEqual({ ok: true, value: false });
    guest.terminalJob = false;
    expect(await api.rest()).toEqual({ ok: true, value: true });
    expect(meta(root).state).toBe(meta(root).disk);
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'woke' });
    await api.shutdown();
  });

  it('rests by itself after its long quiet, saying so (idle), unless a terminal job runs: then it asks again after the next', async () => {
    const root = new MemDir();
    const created: FakeEmulator[] = [];
    const api = makeApi(root, await image('h1', [1]), created, 0, undefined, 80);
    const statuses: VmStatus[] = [];
    await api.subscribeStatus((status) => statuses.push(status));
    await api.start({ imageBaseUrl: 'img', stackId: 's1' });
    const guest = created.at(-1)!.guest;
    guest.terminalJob = true;
    await new Promise((resolve) => setTimeout(resolve, 130));
    expect(statuses.at(-1)).toMatchObject({ state: 'ready' });
    guest.terminalJob = false;
    await vi.waitFor(() => expect(statuses.at(-1)).toEqual({ state: 'suspended', idle: true }), { timeout: 2000 });
    expect(meta(root).state).toBe(meta(root).disk);
    // A suspend the stack asks for is not an idle one.
    expect(await api.start({ imageBaseUrl: 'img', stackId: 's1' })).toEqual({ ok: true, value: 'woke' });
    await api.suspend();
    expect(statuses.at(-1)).toEqual({ state: 'suspended' });
    await api.shutdown();
  });

  it('exec before start is an error result, not a throw', async () => {
    const api = makeApi(new MemDir(), await image('h1'));
    expect(await api.exec('x', { command: 'echo' })).toMatchObject({ ok: false, error: { code: 'not_running' } });
  });
});
