// "Include the system image": the image a stack's computer runs on, carried in its `.stack` file
// under `image/` (its manifest.json, boot files and saved states, and `disk.bin`, the disk's
// chunks packed in the manifest's order: vm/stored-image.ts), so the file opens in a Stackdocs
// whose own image differs. The export gathers it from where this browser has it: a stored image
// the stack came with, or the app's own (its chunks from OPFS `base/`, the rest fetched). The
// import keeps it as a stored image, under a folder named by the checksums of what it holds.
import { fetchOk, joinUrl, parseManifest, responseBytes, type FetchLike, type ImageManifest } from '../../vm/image.ts';
import { replaceFile } from '../../storage/atomic-write.ts';
import { sha256Hex } from '../../storage/hash.ts';
import { DISK_PACK, IMAGE_COMPLETE, IMAGES_DIR, imageFolderName, packOrder, readStackImage } from '../../vm/stored-image.ts';
import type { Source } from './source.ts';
import { StackFileError, type ManifestEntry } from './format.ts';

export const IMAGE_PREFIX = 'image/';
export const IMAGE_MANIFEST = `${IMAGE_PREFIX}manifest.json`;
/** A name inside `image/`: one plain file name. */
export const IMAGE_PATH = /^image\/[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;
/** Chunks read ahead of the one being written when they are gathered for an export. */
const GATHER_AHEAD = 8;

/** The image's files besides the manifest and the disk: name → size. */
function imageFiles(manifest: ImageManifest): Map<string, number> {
  const files = new Map<string, number>();
  for (const file of Object.values(manifest.files)) files.set(file.file, file.size);
  if (manifest.pristineState) files.set(manifest.pristineState.file, manifest.pristineState.compressedSize);
  if (manifest.bootState) files.set(manifest.bootState.file, manifest.bootState.compressedSize);
  return files;
}

function diskPackSize(manifest: ImageManifest): number {
  return packOrder(manifest).reduce((sum, chunk) => sum + chunk.compressedSize, 0);
}

export interface ImageGathering {
  /** The stack's folder: its `.os/vm/image.json` names a stored image it runs on. */
  stack: FileSystemDirectoryHandle;
  /** OPFS root: `images/` and `base/`. */
  root: FileSystemDirectoryHandle;
  /** The image the stack's disk lies over (machine.json's imageHash). */
  recipe: string;
  /** Where the app's own image is served (absolute), or null. */
  appImageBase: string | null;
  appRecipe: string | null;
  fetch: FetchLike;
}

/** The `image/` entries of an export; throws StackFileError when this browser cannot have them. */
export async function imageSources(options: ImageGathering): Promise<Source[]> {
  const stored = await storedFolder(options);
  if (stored) {
    const manifestFile = await (await stored.getFileHandle('manifest.json')).getFile();
    const manifest = parseManifest(JSON.parse(await manifestFile.text()));
    const sources: Source[] = [{ path: IMAGE_MANIFEST, file: manifestFile, store: true }];
    for (const name of imageFiles(manifest).keys()) sources.push({ path: IMAGE_PREFIX + name, file: await (await stored.getFileHandle(name)).getFile(), store: true });
    sources.push({ path: IMAGE_PREFIX + DISK_PACK, file: await (await stored.getFileHandle(DISK_PACK)).getFile(), store: true });
    return sources;
  }
  if (!options.appImageBase || options.recipe !== options.appRecipe) {
    throw new StackFileError('image', `This stack's computer runs on system image ${options.recipe}, which is not in this browser, so it cannot be included. Start its computer once (it moves to this app's image), then export again.`);
  }
  const base = options.appImageBase;
  const unreachable = (what: string, cause: unknown) =>
    new StackFileError('image', `The system image could not be included: ${what} could not be read (${cause instanceof Error ? cause.message : String(cause)}). Make the computer available offline first, or connect to the internet, then export again.`);
  const fetchBytes = async (file: string) => {
    try {
      return await responseBytes(await fetchOk(joinUrl(base, file), options.fetch));
    } catch (cause) {
      throw unreachable(file, cause);
    }
  };
  const manifestBytes = await fetchBytes('manifest.json');
  const manifest = parseManifest(JSON.parse(new TextDecoder().decode(manifestBytes)));
  const sources: Source[] = [{ path: IMAGE_MANIFEST, bytes: manifestBytes, store: true }];
  for (const name of imageFiles(manifest).keys()) sources.push({ path: IMAGE_PREFIX + name, bytes: await fetchBytes(name), store: true });
  const chunksDir = await options.root.getDirectoryHandle('base').catch(() => null);
  const chunkBytes = async (chunk: (typeof manifest.disk.chunks)[number]): Promise<Uint8Array> => {
    // Kept in this browser (gzip as shipped, checked when it was stored), else from the server.
    const kept = await chunksDir
      ?.getFileHandle(chunk.sha256)
      .then(async (handle) => new Uint8Array(await (await handle.getFile()).arrayBuffer()))
      .catch(() => null);
    const bytes = kept && kept.byteLength === chunk.compressedSize ? kept : await fetchBytes(chunk.file);
    if (bytes.byteLength !== chunk.compressedSize) throw unreachable(chunk.file, new Error(`${bytes.byteLength} bytes, not ${chunk.compressedSize}`));
    return bytes;
  };
  const order = packOrder(manifest);
  sources.push({
    path: IMAGE_PREFIX + DISK_PACK,
    size: diskPackSize(manifest),
    store: true,
    async *stream() {
      const ahead: Promise<Uint8Array>[] = [];
      for (let next = 0; next < order.length || ahead.length; ) {
        while (ahead.length < GATHER_AHEAD && next < order.length) {
          const reading = chunkBytes(order[next++]!);
          reading.catch(() => {}); // awaited in turn
          ahead.push(reading);
        }
        yield await ahead.shift()!;
      }
    },
  });
  return sources;
}

async function storedFolder(options: ImageGathering): Promise<FileSystemDirectoryHandle | null> {
  const image = await readStackImage(options.stack);
  if (!image || image.recipe !== options.recipe) return null;
  try {
    const folder = await (await options.root.getDirectoryHandle(IMAGES_DIR)).getDirectoryHandle(image.folder);
    await folder.getFileHandle(IMAGE_COMPLETE);
    return folder;
  } catch {
    return null;
  }
}

/**
 * An import's `image/` entries, checked before anything is written: the image's manifest (read
 * first) names every file and its size, and `disk.bin` must hold exactly its chunks.
 * `target` is where they go, or null when they are not needed (this app serves that image, or
 * this browser keeps it already).
 */
export interface ImageImport {
  recipe: string;
  folder: string;
  target: FileSystemDirectoryHandle | null;
  /** Made by this import: removed if the import fails. */
  made: boolean;
}

export async function prepareImageImport(options: {
  entries: Required<ManifestEntry>[];
  manifestBytes: Uint8Array;
  recipe: string | null;
  appRecipe: string | null;
  root: FileSystemDirectoryHandle;
}): Promise<ImageImport> {
  const damaged = (why: string) => new StackFileError('damaged', `This stack file's system image is damaged: ${why}.`);
  let manifest: ImageManifest;
  try {
    manifest = parseManifest(JSON.parse(new TextDecoder().decode(options.manifestBytes)));
  } catch (error) {
    throw damaged(error instanceof Error ? error.message : 'its manifest is not readable');
  }
  if (manifest.recipeHash !== options.recipe) throw damaged(`it is image ${manifest.recipeHash}, the stack says ${options.recipe}`);
  const expected = imageFiles(manifest);
  expected.set(DISK_PACK, diskPackSize(manifest));
  const listed = options.entries.filter((entry) => entry.path.startsWith(IMAGE_PREFIX) && entry.path !== IMAGE_MANIFEST);
  for (const entry of listed) {
    const name = entry.path.slice(IMAGE_PREFIX.length);
    if (!expected.has(name)) throw damaged(`"${entry.path}" is not part of it`);
    if (expected.get(name) !== entry.size) throw damaged(`"${entry.path}" has ${entry.size} bytes, its manifest says ${expected.get(name)}`);
  }
  for (const name of expected.keys()) if (!listed.some((entry) => entry.path === IMAGE_PREFIX + name)) throw damaged(`"${IMAGE_PREFIX}${name}" is missing`);
  // Named by what it holds: a file that only claims the same recipe never shares its folder.
  const lines = options.entries
    .filter((entry) => entry.path.startsWith(IMAGE_PREFIX))
    .map((entry) => `${entry.path} ${entry.sha256}\n`)
    .sort()
    .join('');
  const key = await sha256Hex(new TextEncoder().encode(lines));
  const folder = imageFolderName(manifest.recipeHash, key);
  if (manifest.recipeHash === options.appRecipe) return { recipe: manifest.recipeHash, folder, target: null, made: false };
  const images = await options.root.getDirectoryHandle(IMAGES_DIR, { create: true });
  const kept = await images
    .getDirectoryHandle(folder)
    .then((dir) => dir.getFileHandle(IMAGE_COMPLETE))
    .then(
      () => true,
      () => false,
    );
  if (kept) return { recipe: manifest.recipeHash, folder, target: null, made: false };
  await images.removeEntry(folder, { recursive: true }).catch(() => {}); // a cut-short import's
  return { recipe: manifest.recipeHash, folder, target: await images.getDirectoryHandle(folder, { create: true }), made: true };
}

/** The image is whole: marked complete last. */
export async function completeImageImport(image: ImageImport): Promise<void> {
  if (!image.target) return;
  await replaceFile(image.target, IMAGE_COMPLETE, new Date().toISOString());
}

export async function abandonImageImport(image: ImageImport | null, root: FileSystemDirectoryHandle): Promise<void> {
  if (!image?.made) return;
  await (await root.getDirectoryHandle(IMAGES_DIR).catch(() => null))?.removeEntry(image.folder, { recursive: true }).catch(() => {});
}

/**
 * Removes the stored images no stack runs on any more (after a delete): each stack's
 * `.os/vm/image.json` names the one it uses (an import writes it before the image). Returns the
 * bytes freed.
 */
export async function pruneImages(root: FileSystemDirectoryHandle, stacks: FileSystemDirectoryHandle, sizeOf: (dir: FileSystemDirectoryHandle) => Promise<number>): Promise<number> {
  const images = await root.getDirectoryHandle(IMAGES_DIR).catch(() => null);
  if (!images) return 0;
  const used = new Set<string>();
  for await (const [, handle] of (stacks as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
    if (handle.kind !== 'directory') continue;
    const image = await readStackImage(handle as FileSystemDirectoryHandle);
    if (image) used.add(image.folder);
  }
  let freed = 0;
  const names: string[] = [];
  for await (const name of (images as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
  for (const name of names) {
    if (used.has(name)) continue;
    const bytes = await sizeOf(await images.getDirectoryHandle(name)).catch(() => 0);
    await images.removeEntry(name, { recursive: true }).then(() => (freed += bytes), () => {});
  }
  return freed;
}
