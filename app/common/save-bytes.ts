// Hands bytes or a file to the browser as a download, or to a file the user picks where the
// browser lets a page save to one (File System Access).
export function saveBytes(bytes: Uint8Array, filename: string, mime: string): void {
  saveFile(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mime }), filename);
}

export function saveFile(file: Blob, filename: string): void {
  const url = URL.createObjectURL(file);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  // Revoked later: some browsers start reading the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

interface SaveFilePicker {
  showSaveFilePicker?(options: { suggestedName: string; types: { description: string; accept: Record<string, string[]> }[] }): Promise<FileSystemFileHandle>;
}

/**
 * Asks where to save a `.stack` file, inside the user's click: a file handle; null where the
 * browser has no save picker (the file is then downloaded); 'closed' when the user closed it.
 */
export async function pickStackFile(suggestedName: string, description: string): Promise<FileSystemFileHandle | null | 'closed'> {
  const picker = (window as unknown as SaveFilePicker).showSaveFilePicker;
  if (!picker) return null;
  try {
    return await picker.call(window, { suggestedName, types: [{ description, accept: { 'application/zip': ['.stack'] } }] });
  } catch {
    return 'closed';
  }
}
