// The machine's storage under Node: a SyncFile over a file descriptor (the OPFS sync handle's role)
// and a MachineStore over a directory. The image build (vm-images/lib/prestate.ts), benchmarks and
// tests use it; the browser never does.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { SyncFile } from './disk.ts';
import { fetchImageFile, fetchManifest, fetchSavedState, fillDisk, type FetchLike, type ImageManifest } from './image.ts';
import type { WasmInstantiate } from './fresh-memory.ts';
import type { MachineBootFiles, MachineStore } from './machine-contract.ts';

/** Opens (creating when absent) a file for positional IO. */
export function openNodeSyncFile(path: string): SyncFile {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch {
    fd = openSync(path, 'w+');
  }
  return {
    read: (buffer, at) => readSync(fd, buffer, 0, buffer.length, at),
    write: (buffer, at) => writeSync(fd, buffer, 0, buffer.length, at),
    flush: () => fsyncSync(fd),
    get size() {
      return fstatSync(fd).size;
    },
    truncate: (size) => ftruncateSync(fd, size),
    close: () => closeSync(fd),
  };
}

/** A MachineStore over a directory (state.bin, machine.json), for Node tests. */
export function createNodeMachineStore(dir: string): MachineStore {
  mkdirSync(dir, { recursive: true });
  const meta = join(dir, 'machine.json');
  const read = (): { state: string | null; disk: string | null } => {
    try {
      return JSON.parse(readFileSync(meta, 'utf8')) as { state: string | null; disk: string | null };
    } catch {
      return { state: null, disk: null };
    }
  };
  const write = (value: { state: string | null; disk: string | null }) => {
    writeFileSync(`${meta}.tmp`, JSON.stringify(value));
    renameSync(`${meta}.tmp`, meta);
  };
  return {
    readState: async () => {
      try {
        const b = readFileSync(join(dir, 'state.bin'));
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
      } catch {
        return null;
      }
    },
    writeState: async (state, generation, diskMovedOn) => {
      writeFileSync(join(dir, 'state.bin.tmp'), new Uint8Array(state));
      renameSync(join(dir, 'state.bin.tmp'), join(dir, 'state.bin'));
      write({ state: generation, disk: diskMovedOn?.() ? null : generation });
    },
    readGeneration: async () => read(),
    markDiskDirty: () => {
      const current = read();
      if (current.disk !== null) write({ ...current, disk: null });
    },
    clearState: async () => {
      rmSync(join(dir, 'state.bin'), { force: true });
      write({ state: null, disk: null });
    },
  };
}

/** The built image's boot files read from `imageDir`, and its disk filled into `diskPath` (as the VM worker does from HTTP). */
export async function loadNodeImage(imageDir: string, diskPath: string): Promise<{ manifest: ImageManifest; files: MachineBootFiles }> {
  const fileFetch: FetchLike = async (url) => new Response(readFileSync(url) as Uint8Array<ArrayBuffer>);
  const manifest = await fetchManifest(imageDir, fileFetch);
  const [bios, vgaBios, kernel, initrd] = await Promise.all((['bios', 'vgaBios', 'kernel', 'initrd'] as const).map((role) => fetchImageFile(manifest, imageDir, role, { fetch: fileFetch })));
  const fill = openNodeSyncFile(diskPath);
  try {
    await fillDisk(manifest, imageDir, fill, { fetch: fileFetch });
  } finally {
    fill.close();
  }
  const bootState = manifest.bootState ? await fetchSavedState(manifest.bootState, imageDir, { fetch: fileFetch }) : undefined;
  const files: MachineBootFiles = { bios: bios!, vgaBios: vgaBios!, kernel: kernel!, initrd: initrd!, ...(bootState ? { bootState } : {}), cmdline: manifest.cmdline, memoryMiB: manifest.memoryMiB, agentPort: manifest.agent.virtioConsolePort };
  return { manifest, files };
}

/** v86's wasm from a file, compiled once per process, as the browser compiles it ahead of a wake. */
export function nodeV86Wasm(path: string): WasmInstantiate {
  let module: Promise<WebAssembly.Module> | null = null;
  return async (imports) => {
    module ??= WebAssembly.compile(readFileSync(path));
    return (await WebAssembly.instantiate(await module, imports)).exports;
  };
}
