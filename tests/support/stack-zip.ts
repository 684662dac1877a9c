// The entries of a `.stack` file in memory, as its importer reads them (zip.js, zstd registered):
// for tests and benches that look inside an exported file.
import { BlobReader, Uint8ArrayWriter, ZipReader, type FileEntry } from '@zip.js/zip.js';
import { registerZstd } from '../../worker/stack-file/zstd-codec.ts';

export async function unpackStackFile(bytes: Uint8Array, only?: (name: string) => boolean): Promise<Record<string, Uint8Array>> {
  await registerZstd();
  const zip = new ZipReader(new BlobReader(new Blob([bytes.slice()])), { useWebWorkers: false });
  try {
    const files: Record<string, Uint8Array> = {};
    for (const entry of (await zip.getEntries()) as FileEntry[]) {
      if (entry.directory || (only && !only(entry.filename))) continue;
      // Each entry's CRC-32 checked too (the app's importer checks the SHA-256 instead).
      files[entry.filename] = await entry.getData(new Uint8ArrayWriter(), { checkSignature: true });
    }
    return files;
  } finally {
    await zip.close();
  }
}
