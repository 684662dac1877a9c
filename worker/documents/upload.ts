// Checks an uploaded file before anything is stored: size, a safe name, and a type told by its
// bytes. Each refusal says exactly what is wrong with which file.
import { sniffMime } from '../user-files.ts';
import { imageSize } from './image-size.ts';

export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
/** Larger images would take more memory to decode and read than a tab can spare. */
export const MAX_IMAGE_PIXELS = 50_000_000;

/** What the document pipeline can read: PDFs, images, text, CSV and spreadsheets. */
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
]);

const CLAIMS: [RegExp, (mime: string) => boolean, string][] = [
  [/\.pdf$/i, (mime) => mime === 'application/pdf', 'a PDF'],
  [/\.png$/i, (mime) => mime === 'image/png', 'a PNG image'],
  [/\.jpe?g$/i, (mime) => mime === 'image/jpeg', 'a JPEG image'],
  [/\.webp$/i, (mime) => mime === 'image/webp', 'a WebP image'],
  [/\.tiff?$/i, (mime) => mime === 'image/tiff', 'a TIFF image'],
  [/\.xlsx$/i, (mime) => mime.includes('spreadsheetml'), 'an Excel workbook'],
];

export class UploadError extends Error {}

/** The last path segment, without control characters or leading dots; never empty. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f]/g, '')
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

/** Returns the safe name and the type; throws UploadError naming the file and the problem. */
export function checkUpload(name: string, bytes: Uint8Array): { name: string; mime: string } {
  const safe = safeFileName(name);
  if (bytes.byteLength === 0) throw new UploadError(`${safe} is empty (0 bytes): there is nothing to read.`);
  if (bytes.byteLength > MAX_UPLOAD_BYTES) {
    throw new UploadError(`${safe} is ${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB; the limit is 25 MB per file.`);
  }
  const mime = sniffMime(bytes.subarray(0, 64), safe);
  for (const [pattern, fits, what] of CLAIMS) {
    if (pattern.test(safe) && !fits(mime)) {
      throw new UploadError(`${safe} is named like ${what}, but its contents are not (${describe(mime)}). Check that the file is not damaged.`);
    }
  }
  const size = mime.startsWith('image/') ? imageSize(bytes, mime) : null;
  if (size && size.width * size.height > MAX_IMAGE_PIXELS) {
    throw new UploadError(`${safe} is ${size.width}×${size.height} pixels; images up to 50 megapixels can be read. Scale it down and upload it again.`);
  }
  if (!SUPPORTED.has(mime)) {
    throw new UploadError(`${safe} is ${describe(mime)}, which cannot be read here. Upload PDFs, images (PNG, JPEG, WebP, TIFF), text, CSV or Excel files.`);
  }
  return { name: safe, mime };
}

function describe(mime: string): string {
  if (mime === 'application/octet-stream') return 'binary data of an unknown kind';
  if (mime === 'application/zip') return 'a ZIP archive';
  if (mime.startsWith('text/')) return 'text';
  return mime;
}
