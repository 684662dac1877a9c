// Puts files straight into a stack's folder in the page's Origin Private File System, as if they
// had been uploaded earlier (uploads have their own tests), and takes them away again.
import type { Page } from '@playwright/test';

/** `path` is under the OPFS root, e.g. `stacks/default/documents/invoice.pdf`. */
export async function putFile(page: Page, path: string, bytes: Buffer): Promise<void> {
  await page.evaluate(
    async ({ path, base64 }) => {
      const parts = path.split('/');
      let dir = await navigator.storage.getDirectory();
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
      const writable = await (await dir.getFileHandle(parts.at(-1)!, { create: true })).createWritable();
      await writable.write(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
      await writable.close();
    },
    { path, base64: bytes.toString('base64') },
  );
}

export async function removeFile(page: Page, path: string): Promise<void> {
  await page.evaluate(async (path) => {
    const parts = path.split('/');
    let dir = await navigator.storage.getDirectory();
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
    await dir.removeEntry(parts.at(-1)!);
  }, path);
}
