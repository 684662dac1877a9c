// The /workspace mirror over v86's real 9p filesystem (an emulator that is loaded, not booted),
// changed the way its 9p server changes it, against an in-memory store.
import { V86 } from 'v86';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkspaceMirror, type Fs9pLike, type WorkspaceEntry, type WorkspaceStore } from './workspace.ts';

const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array | null) => (b ? new TextDecoder().decode(b) : null);

class MemStore implements WorkspaceStore {
  files = new Map<string, { bytes: Uint8Array; lastModified: number }>();
  dirs = new Set<string>();
  clock = 1000;
  failWrites: Error | null = null;
  writes = 0;

  put(path: string, content: string) {
    this.files.set(path, { bytes: text(content), lastModified: ++this.clock });
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) this.dirs.add(parts.slice(0, i).join('/'));
  }
  async list() {
    const out: WorkspaceEntry[] = [...this.dirs].sort().map((path) => ({ path, kind: 'dir' as const, lastModified: 0, size: 0 }));
    for (const [path, f] of this.files) out.push({ path, kind: 'file', lastModified: f.lastModified, size: f.bytes.length });
    return out;
  }
  async read(path: string) {
    return this.files.get(path)?.bytes ?? null;
  }
  async write(path: string, bytes: Uint8Array) {
    if (this.failWrites) throw this.failWrites;
    this.writes++;
    this.put(path, '');
    this.files.set(path, { bytes: new Uint8Array(bytes), lastModified: ++this.clock });
    return this.clock;
  }
  async mkdir(path: string) {
    this.dirs.add(path);
  }
  async remove(path: string) {
    this.files.delete(path);
    this.dirs.delete(path);
    for (const key of [...this.files.keys()]) if (key.startsWith(`${path}/`)) this.files.delete(key);
    for (const key of [...this.dirs]) if (key.startsWith(`${path}/`)) this.dirs.delete(key);
  }
  async stat(path: string): Promise<WorkspaceEntry | null> {
    const f = this.files.get(path);
    if (f) return { path, kind: 'file', lastModified: f.lastModified, size: f.bytes.length };
    return this.dirs.has(path) ? { path, kind: 'dir', lastModified: 0, size: 0 } : null;
  }
}

type RealFs = Fs9pLike & {
  CreateFile(name: string, parent: number): number;
  Rename(oldDir: number, oldName: string, newDir: number, newName: string): Promise<number>;
  SearchPath(path: string): { id: number; parentid: number };
  read_file(path: string): Promise<Uint8Array | null>;
};

let emulator: { fs9p: RealFs; destroy(): Promise<void>; add_listener(e: string, f: () => void): void };
let fs: RealFs;

beforeEach(async () => {
  emulator = new V86({
    wasm_path: new URL('../node_modules/v86/build/v86.wasm', import.meta.url).pathname,
    memory_size: 16 << 20,
    filesystem: {},
    autostart: false,
    disable_keyboard: true,
    disable_mouse: true,
    disable_speaker: true,
  } as never) as never;
  await new Promise<void>((resolve) => emulator.add_listener('emulator-loaded', resolve));
  fs = emulator.fs9p;
});

afterEach(async () => {
  await emulator.destroy();
});

/** What the guest's `echo content > path` does through the 9p server. */
async function guestWrite(path: string, content: string) {
  const found = fs.SearchPath(path);
  let id = found.id;
  if (id === -1) id = fs.CreateFile(path.split('/').at(-1)!, found.parentid);
  await fs.ChangeSize(id, 0);
  const bytes = text(content);
  await fs.Write(id, 0, bytes.length, bytes);
}

describe('WorkspaceMirror', () => {
  it('loads the store into the filesystem, folders included, never .os', async () => {
    const store = new MemStore();
    store.put('documents/a.txt', 'alpha');
    store.dirs.add('artifacts');
    store.put('.os/secret.json', 'no');
    const mirror = new WorkspaceMirror(store);
    mirror.attach(fs);
    expect(await mirror.reconcile(null, null)).toMatchObject({ loaded: 1, removed: 0 });
    expect(str(await fs.read_file('documents/a.txt'))).toBe('alpha');
    expect(fs.SearchPath('artifacts').id).toBeGreaterThan(0);
    expect(fs.SearchPath('.os').id).toBe(-1);
    expect(await mirror.flush()).toEqual({ written: 0, removed: 0 }); // no echo of what it loaded
  });

  it('carries guest writes, renames and deletions to the store', async () => {
    const store = new MemStore();
    store.put('documents/a.txt', 'alpha');
    const mirror = new WorkspaceMirror(store);
    mirror.attach(fs);
    await mirror.reconcile(null, null);

    await guestWrite('documents/b.txt', 'bravo');
    fs.CreateDirectory('out', 0);
    await guestWrite('out/c.csv', 'x,y\n1,2\n');
    expect(mirror.pending).toBe(true);
    expect(await mirror.flush()).toEqual({ written: 2, removed: 0 });
    expect(str(await store.read('documents/b.txt'))).toBe('bravo');
    expect(str(await store.read('out/c.csv'))).toBe('x,y\n1,2\n');
    expect(store.dirs.has('out')).toBe(true);

    // sed -i style: a new file renamed over the old one; then a deletion.
    await guestWrite('documents/.tmp', 'ALPHA');
    const docs = fs.SearchPath('documents').id;
    await fs.Rename(docs, '.tmp', docs, 'a.txt');
    fs.Unlink(docs, 'b.txt');
    await mirror.flush();
    expect(str(await store.read('documents/a.txt'))).toBe('ALPHA');
    expect(store.files.has('documents/.tmp')).toBe(false);
    expect(store.files.has('documents/b.txt')).toBe(false);

    // A rewrite in place of the same length is seen too (bytes, not sizes, are tracked).
    await guestWrite('documents/a.txt', 'omega');
    await mirror.flush();
    expect(str(await store.read('documents/a.txt'))).toBe('omega');
  });

  it('shows host writes and removals to the guest without writing them back', async () => {
    const store = new MemStore();
    const mirror = new WorkspaceMirror(store);
    mirror.attach(fs);
    await mirror.reconcile(null, null);
    const big = new Uint8Array(10 * 1024 * 1024).map((_, i) => i * 7);
    await store.write('documents/big.bin', big);
    const writes = store.writes;
    const started = performance.now();
    await mirror.hostChanged('documents/big.bin');
    const ms = performance.now() - started;
    const seen = await fs.read_file('documents/big.bin');
    expect(seen?.length).toBe(big.length);
    expect(seen?.[12345]).toBe(big[12345]);
    expect(ms).toBeLessThan(2000); // a generous bound; the bench measures it
    expect(await mirror.flush()).toEqual({ written: 0, removed: 0 });
    expect(store.writes).toBe(writes);

    await store.remove('documents/big.bin');
    await mirror.hostChanged('documents/big.bin');
    expect(fs.SearchPath('documents/big.bin').id).toBe(-1);
    await expect(mirror.hostChanged('../etc/passwd')).rejects.toThrow('not a workspace path');
  });

  it('after a wake reloads only what changed since the state, when the journal is its own', async () => {
    const store = new MemStore();
    store.put('a.txt', 'one');
    store.put('b.txt', 'two');
    const first = new WorkspaceMirror(store);
    first.attach(fs);
    await first.reconcile(null, null);
    const journal = first.snapshotJournal('g1');

    // While the machine was saved: b changes, c appears, a goes; the guest's FS still has the old view.
    store.put('b.txt', 'TWO');
    store.put('c.txt', 'three');
    await store.remove('a.txt');
    const woke = new WorkspaceMirror(store);
    woke.attach(fs);
    expect(await woke.reconcile(journal, 'g1')).toMatchObject({ loaded: 2, removed: 1 });
    expect(str(await fs.read_file('b.txt'))).toBe('TWO');
    expect(str(await fs.read_file('c.txt'))).toBe('three');
    expect(fs.SearchPath('a.txt').id).toBe(-1);

    // A journal from another generation is not trusted: everything is reloaded.
    const other = new WorkspaceMirror(store);
    other.attach(fs);
    expect(await other.reconcile(woke.snapshotJournal('g2'), 'g3')).toMatchObject({ loaded: 2 });
  });

  it('keeps what the store refused (a full disk) for the next flush and says why', async () => {
    const store = new MemStore();
    const mirror = new WorkspaceMirror(store);
    mirror.attach(fs);
    await mirror.reconcile(null, null);
    await guestWrite('report.txt', 'hello');
    store.failWrites = new DOMException('full', 'QuotaExceededError');
    await expect(mirror.flush()).rejects.toThrow('full');
    expect(mirror.lastError?.name).toBe('QuotaExceededError');
    expect(mirror.pending).toBe(true);
    store.failWrites = null;
    expect(await mirror.flush()).toEqual({ written: 1, removed: 0 });
    expect(str(await store.read('report.txt'))).toBe('hello');
  });
});
