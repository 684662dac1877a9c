// Writing a whole file into an OPFS folder: the new bytes replace the old only when complete,
// a failed write leaves no empty file where there was none, and a full disk is reported as one.
// Shared by the stack's user files (worker/user-files.ts) and the computer's /workspace mirror.

/**
 * Writes `bytes` as `dir/name` through a swap file (createWritable), so readers never see half a
 * file. Throws a QuotaExceededError DOMException when the origin's storage is full, whatever
 * error the browser raised for it (a write through a data pipe can fail as "Failed to write data
 * to data pipe" before the quota refusal arrives).
 */
export async function writeWholeFile(dir: FileSystemDirectoryHandle, name: string, bytes: Uint8Array): Promise<FileSystemFileHandle> {
  const existed = await dir.getFileHandle(name).then(
    () => true,
    () => false,
  );
  const handle = await dir.getFileHandle(name, { create: true });
  try {
    const writable = await handle.createWritable();
    try {
      await writable.write(bytes as Uint8Array<ArrayBuffer>);
      await writable.close();
    } catch (error) {
      await writable.abort().catch(() => {});
      throw error;
    }
  } catch (error) {
    if (!existed) await dir.removeEntry(name).catch(() => {});
    if (isQuotaError(error) || !(await isFull(dir, bytes.byteLength))) throw error;
    throw new DOMException(`${(error as Error)?.message ?? 'The write failed'}: the browser's storage is full`, 'QuotaExceededError');
  }
  return handle;
}

export function isQuotaError(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'QuotaExceededError';
}

/** Whether `size` more bytes would be refused for quota: tried with a scratch file, then removed. */
async function isFull(dir: FileSystemDirectoryHandle, size: number): Promise<boolean> {
  const name = `.write-probe-${crypto.randomUUID()}`;
  try {
    const writable = await (await dir.getFileHandle(name, { create: true })).createWritable();
    try {
      await writable.truncate(Math.max(size, 1));
      await writable.close();
      return false;
    } catch (error) {
      await writable.abort().catch(() => {});
      return isQuotaError(error);
    }
  } catch (error) {
    return isQuotaError(error);
  } finally {
    await dir.removeEntry(name).catch(() => {});
  }
}
