// Large files put straight into a stack's folder in the page's OPFS (as an import or uploads leave
// them), each with its own bytes. Run in the page: `page.evaluate(makeBulkFiles, options)` (the
// function is sent as its source, so it uses nothing from outside).

export interface BulkFiles {
  /** Under the OPFS root, e.g. ['stacks', 'default', 'bulk']. */
  folder: string[];
  files: number;
  mb: number;
}

/**
 * Writes `part-NN.bin` files of `mb` MiB each and returns what `sha256sum part-*` prints for
 * them, so a test can compare the guest's listing with one line.
 */
export async function makeBulkFiles({ folder, files, mb }: BulkFiles): Promise<string> {
  let dir = await navigator.storage.getDirectory();
  for (const part of folder) dir = await dir.getDirectoryHandle(part, { create: true });
  const lines: string[] = [];
  for (let f = 0; f < files; f++) {
    const words = new Uint32Array((mb * 1024 * 1024) / 4);
    let x = 0x9e3779b9 ^ (f + 1);
    for (let i = 0; i < words.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      words[i] = x >>> 0;
    }
    const name = `part-${String(f).padStart(2, '0')}.bin`;
    const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
    await writable.write(words);
    await writable.close();
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', words));
    lines.push(`${[...digest].map((b) => b.toString(16).padStart(2, '0')).join('')}  ${name}\n`);
  }
  return lines.join('');
}
