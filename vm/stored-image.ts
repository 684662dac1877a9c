// A system image kept in this browser rather than served by the app: what a `.stack` file that
// includes its image brings, for a stack whose computer runs on another image than this app's.
// OPFS `images/<recipe>-<key>/` holds the files the app would serve (manifest.json, the boot
// files, the saved states) and the disk's chunks packed in one file, `disk.bin`: each distinct
// chunk's gzip bytes in the manifest's order (packOrder). The folder's `key` is taken from the
// sha256 of its manifest, so two images that merely claim the same recipe never share a folder,
// and `complete` is written last. The VM worker reads such an image through `storedImageFetch`
// and `packedChunkFiles` exactly as it reads a served one; it never enters the shared `base/`.
import type { ChunkFiles } from './disk/chunk-files.ts';
import type { DiskChunk, FetchLike, ImageManifest } from './image.ts';

export const IMAGES_DIR = 'images';
export const DISK_PACK = 'disk.bin';
export const IMAGE_COMPLETE = 'complete';
/** An image base URL that names a stored image: `stored-image:images/<folder>`. */
export const STORED_IMAGE_SCHEME = 'stored-image:';

export function storedImageBase(folder: string): string {
  return `${STORED_IMAGE_SCHEME}${IMAGES_DIR}/${folder}`;
}

export function isStoredImageUrl(url: string): boolean {
  return url.startsWith(STORED_IMAGE_SCHEME);
}

/** The folder name of an image: its recipe and the start of its manifest's sha256. */
export function imageFolderName(recipe: string, manifestSha256: string): string {
  return `${recipe}-${manifestSha256.slice(0, 16)}`;
}

/** The image's distinct chunks in the order `disk.bin` holds them. */
export function packOrder(manifest: ImageManifest): DiskChunk[] {
  const seen = new Set<string>();
  return manifest.disk.chunks.filter((chunk) => !seen.has(chunk.sha256) && seen.add(chunk.sha256));
}

/** The file a stored image's URL names (`stored-image:images/<folder>/<file>`), or null. */
export async function storedImageFile(root: () => Promise<FileSystemDirectoryHandle>, url: string): Promise<File | null> {
  const parts = url.slice(STORED_IMAGE_SCHEME.length).split('/');
  if (!isStoredImageUrl(url) || parts.length !== 3 || parts[0] !== IMAGES_DIR || parts.some((part) => !part || part === '.' || part === '..')) return null;
  try {
    const folder = await (await (await root()).getDirectoryHandle(IMAGES_DIR)).getDirectoryHandle(parts[1]!);
    return await (await folder.getFileHandle(parts[2]!)).getFile();
  } catch {
    return null;
  }
}

/**
 * Answers the image's requests from OPFS: the file, or 404 when it is not there. Only the
 * folder's own top-level files are served.
 */
export function storedImageFetch(root: () => Promise<FileSystemDirectoryHandle>): FetchLike {
  return async (url) => {
    const file = await storedImageFile(root, url);
    return file ? new Response(file) : new Response(null, { status: 404 });
  };
}

/**
 * The image's chunks, read from `disk.bin` (checked against the manifest when it was imported).
 * Read-only: the chunks are all there, and nothing a stack does writes into its image.
 */
export function packedChunkFiles(manifest: ImageManifest, pack: File): ChunkFiles {
  const at = new Map<string, { start: number; end: number }>();
  let offset = 0;
  for (const chunk of packOrder(manifest)) {
    at.set(chunk.sha256, { start: offset, end: offset + chunk.compressedSize });
    offset += chunk.compressedSize;
  }
  const complete = offset === pack.size;
  return {
    async read(sha256) {
      const range = complete ? at.get(sha256) : undefined;
      return range ? new Uint8Array(await pack.slice(range.start, range.end).arrayBuffer()) : null;
    },
    async write() {},
    async remove() {},
    async list() {
      return complete ? new Set(at.keys()) : new Set();
    },
  };
}

/** The stored image a stack's computer runs on (`.os/vm/image.json`, written by its import). */
export interface StackImage {
  recipe: string;
  folder: string;
}

export const STACK_IMAGE_FILE = 'image.json';

export function parseStackImage(text: string): StackImage | null {
  try {
    const value = JSON.parse(text) as Partial<StackImage>;
    if (typeof value.recipe === 'string' && /^[0-9a-f]{8,64}$/.test(value.recipe) && typeof value.folder === 'string' && /^[0-9a-f]{8,64}-[0-9a-f]{16}$/.test(value.folder)) {
      return { recipe: value.recipe, folder: value.folder };
    }
  } catch {
    // not one
  }
  return null;
}

/**
 * The stored image a stack's computer runs on: its `image.json` names one, the app's own image is
 * another, and that image's folder is complete. Null: the app's image serves it.
 */
export async function stackStoredImage(stackDir: FileSystemDirectoryHandle, root: FileSystemDirectoryHandle, appRecipe: string | null): Promise<string | null> {
  const image = await readStackImage(stackDir);
  if (!image || image.recipe === appRecipe) return null;
  try {
    await (await (await root.getDirectoryHandle(IMAGES_DIR)).getDirectoryHandle(image.folder)).getFileHandle(IMAGE_COMPLETE);
    return storedImageBase(image.folder);
  } catch {
    return null;
  }
}

/** The stored image a stack's `.os/vm/image.json` names, or null (it runs on the app's image). */
export async function readStackImage(stackDir: FileSystemDirectoryHandle): Promise<StackImage | null> {
  try {
    const vm = await (await stackDir.getDirectoryHandle('.os')).getDirectoryHandle('vm');
    return parseStackImage(await (await (await vm.getFileHandle(STACK_IMAGE_FILE)).getFile()).text());
  } catch {
    return null;
  }
}
