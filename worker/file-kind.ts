// What a file is, told by its bytes and never by its name alone: binary formats by file-type (a
// maintained signature library that also looks inside ZIPs for Office files), text by being
// valid UTF-8, or UTF-16 with its byte-order mark, with no control characters. The name only
// picks between kinds of text (CSV, Markdown, JSON).

/** How much of a file is read to tell its kind: file-type's own advice for its signatures, and enough text to judge. */
export const SNIFF_BYTES = 64 * 1024;

/** Formats written in text that a signature names better than "text" does. */
const TEXT_BASED_FORMATS = new Set(['application/pdf', 'application/postscript', 'application/rtf', 'application/xml', 'image/svg+xml']);

/** Controls allowed in text: tab, line feed, form feed, carriage return. */
const CONTROL = /[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f]/;

export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be';

/**
 * The encoding `bytes` are text in, or null when they are not text. `complete` says whether the
 * bytes are the whole file: a head cut off in the middle of a character still counts as text.
 * Must not throw.
 */
export function textEncoding(bytes: Uint8Array, complete = true): TextEncodingName | null {
  const encoding: TextEncodingName = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : 'utf-8';
  try {
    // `stream` keeps a trailing partial character back instead of failing on it.
    const text = new TextDecoder(encoding, { fatal: true }).decode(bytes, { stream: !complete });
    return CONTROL.test(text) ? null : encoding;
  } catch {
    return null;
  }
}

function textMime(name: string): string {
  if (/\.csv$/i.test(name)) return 'text/csv';
  if (/\.(md|markdown)$/i.test(name)) return 'text/markdown';
  if (/\.json$/i.test(name)) return 'application/json';
  return 'text/plain';
}

/**
 * The MIME type of a file from its first bytes (`head`, at most SNIFF_BYTES of it; `complete`
 * when that is the whole file) and its name: a format's signature, else text, else
 * `application/octet-stream`. Throws only when the signature library cannot be loaded.
 */
export async function sniffMime(head: Uint8Array, name: string, complete = true): Promise<string> {
  const sample = head.subarray(0, SNIFF_BYTES);
  const whole = complete && sample.length === head.length;
  // The signature library loads with the first file told, not with the stack.
  const { fileTypeFromBuffer } = await import('file-type');
  let detected: string | undefined;
  try {
    detected = (await fileTypeFromBuffer(sample))?.mime;
  } catch {
    detected = undefined; // a damaged header the parser gave up on: judged as bytes below
  }
  // A short signature can be the first letters of a text ("BM" of "BMW ..."): text that reads as
  // text is text, unless the format itself is written in text (a PDF, XML).
  const text = textEncoding(sample, whole) !== null;
  if (detected && (!text || TEXT_BASED_FORMATS.has(detected))) return detected;
  return text ? textMime(name) : 'application/octet-stream';
}

/**
 * Whether the bytes are an encrypted Office document: Excel and Word keep a password-protected
 * .xlsx or .docx in an OLE compound file with an EncryptionInfo stream.
 */
export function isEncryptedOffice(bytes: Uint8Array): boolean {
  if (!(bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0)) return false;
  // The stream's name in the compound file's directory, in UTF-16LE.
  const marker = [...'EncryptionInfo'].flatMap((char) => [char.charCodeAt(0), 0]);
  outer: for (let i = 0; i + marker.length <= bytes.length; i++) {
    for (let j = 0; j < marker.length; j++) if (bytes[i + j] !== marker[j]) continue outer;
    return true;
  }
  return false;
}
