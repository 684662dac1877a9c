// Checks an uploaded file before anything is stored: size, a safe name, and a type told by its
// bytes (worker/file-kind.ts). Each refusal says exactly what is wrong with which file.
import { isEncryptedOffice, sniffMime } from '../file-kind.ts';
import { imageSize } from './image-size.ts';
import { BadRequestError } from '../request-error.ts';

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
/** Larger images would take more memory to decode and read than a tab can spare. */
export const MAX_IMAGE_PIXELS = 50_000_000;

/** What the document pipeline can read: PDFs, images (TIFF scans too), text, CSV, Excel workbooks and Word documents. */
const SUPPORTED = new Set([
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/webp',
  'image/tiff',
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
]);

const CLAIMS: [RegExp, (mime: string) => boolean, string][] = [
  [/\.pdf$/i, (mime) => mime === 'application/pdf', 'a PDF'],
  [/\.png$/i, (mime) => mime === 'image/png', 'a PNG image'],
  [/\.jpe?g$/i, (mime) => mime === 'image/jpeg', 'a JPEG image'],
  [/\.webp$/i, (mime) => mime === 'image/webp', 'a WebP image'],
  [/\.tiff?$/i, (mime) => mime === 'image/tiff', 'a TIFF image'],
  [/\.xlsx$/i, (mime) => mime.includes('spreadsheetml'), 'an Excel workbook'],
  [/\.docx$/i, (mime) => mime.includes('wordprocessingml'), 'a Word document'],
  [/\.(txt|csv|md|markdown|json)$/i, (mime) => mime.startsWith('text/') || mime === 'application/json', 'text'],
];

export class UploadError extends BadRequestError {}

/** Marks that reorder how a name reads (`invoice\u202Efdp.exe` shows as "invoiceexe.pdf"). */
const BIDI_CONTROLS = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The last path segment, well-formed, without control characters, direction overrides or
 * leading dots; never empty.
 */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .toWellFormed()
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(BIDI_CONTROLS, '')
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, 150);
  return clean || 'file';
}

/** `invoice.pdf`, then `invoice (2).pdf`, `invoice (3).pdf`... */
export function uniqueName(name: string, taken: (candidate: string) => boolean): string {
  if (!taken(name)) return name;
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; ; n++) {
    const candidate = `${stem} (${n})${ext}`;
    if (!taken(candidate)) return candidate;
  }
}

/** Throws UploadError when a file of `size` bytes cannot be added: empty, or over the limit. */
export function checkUploadSize(name: string, size: number): void {
  const safe = safeFileName(name);
  if (size === 0) throw new UploadError(`${safe} is empty (0 bytes): there is nothing to read.`);
  if (size > MAX_UPLOAD_BYTES) throw new UploadError(`${safe} is ${(size / 1024 / 1024).toFixed(1)} MB; the limit is 25 MB per file.`);
}

/** Resolves to the safe name and the type; rejects with UploadError naming the file and the problem. */
export async function checkUpload(name: string, bytes: Uint8Array): Promise<{ name: string; mime: string }> {
  const safe = safeFileName(name);
  checkUploadSize(name, bytes.byteLength);
  if (isEncryptedOffice(bytes)) {
    throw new UploadError(
      `${safe} is password-protected (encrypted), so it cannot be read here. Open it in Excel or Word, remove the password (File → Info → Protect, then clear the password), save it, and upload it again.`,
    );
  }
  const mime = await sniffMime(bytes, safe);
  for (const [pattern, fits, what] of CLAIMS) {
    if (pattern.test(safe) && !fits(mime)) {
      const advice = what === 'text' && mime === 'application/octet-stream' ? 'If it is text, save it as UTF-8 and upload it again.' : 'Check that the file is not damaged.';
      throw new UploadError(`${safe} is named like ${what}, but its contents are not (${describe(mime)}). ${advice}`);
    }
  }
  const size = mime.startsWith('image/') ? imageSize(bytes, mime) : null;
  if (size && size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new UploadError(`${safe} is ${size.width}×${size.height} pixels; images up to 50 megapixels can be read. Scale it down and upload it again.`);
  }
  if (!SUPPORTED.has(mime)) {
    throw new UploadError(`${safe} is ${describe(mime)}, which cannot be read here. Upload PDFs, images (PNG, JPEG, WebP, TIFF), text, CSV, Excel or Word files.`);
  }
  return { name: safe, mime };
}

const KINDS: Record<string, string> = {
  'application/octet-stream': 'binary data of an unknown kind',
  'application/zip': 'a ZIP archive',
  'application/gzip': 'a gzip archive',
  'application/x-tar': 'a tar archive',
  'application/x-7z-compressed': 'a 7-Zip archive',
  'application/x-rar-compressed': 'a RAR archive',
  'application/x-msdownload': 'a Windows program',
  'application/x-elf': 'a Linux program',
  'application/x-mach-binary': 'a macOS program',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'a Word document',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'a PowerPoint presentation',
  'application/json': 'JSON',
};

function describe(mime: string): string {
  if (KINDS[mime]) return KINDS[mime];
  if (mime.startsWith('text/')) return 'text';
  return mime;
}
