// A quarter turn handed to tesseract as the image's EXIF orientation. Turning a page by
// `rotateRadians` keeps the image's frame, so a landscape photo of a portrait page loses its top
// and bottom; an EXIF orientation makes tesseract.js's core turn the pixels losslessly into a
// frame of the turned size (as it does for a phone photo that carries one), with the skew still
// straightened by `rotateRadians` afterwards. tesseract.js looks for a big-endian orientation tag
// in the image's first 500 bytes, so the mark goes first: a JPEG APP1 segment right after its
// start, a PNG eXIf chunk right after its header.
import CRC32 from 'crc-32';

/** The EXIF orientation that turns the stored pixels clockwise by a quarter turn, a half, three quarters. */
const ORIENTATION: Record<number, number> = { 90: 6, 180: 3, 270: 8 };

/** A TIFF block (big-endian, as tesseract.js reads it) holding one tag: the orientation. */
function tiffOrientation(value: number): number[] {
  // Header "MM", 42, first IFD at 8; one entry: tag 0x0112, SHORT, count 1, value; no next IFD.
  return [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, value, 0, 0, 0, 0, 0, 0];
}

const isJpeg = (bytes: Uint8Array) => bytes.length > 4 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const isPng = (bytes: Uint8Array) => bytes.length > 33 && PNG_SIGNATURE.every((byte, i) => bytes[i] === byte);

/** Whether withQuarterTurn can mark this image (a JPEG or a PNG). */
export function canTurn(image: Uint8Array): boolean {
  return isJpeg(image) || isPng(image);
}

/**
 * The image marked to be read turned clockwise by `turn` degrees (90, 180 or 270); the image
 * itself when `turn` is 0. Throws for an image canTurn refuses.
 */
export function withQuarterTurn(image: Uint8Array, turn: number): Uint8Array {
  if (!turn) return image;
  const value = ORIENTATION[turn];
  if (!value) throw new RangeError(`a page turns by 90, 180 or 270 degrees, not ${turn}`);
  const tiff = tiffOrientation(value);
  if (isJpeg(image)) {
    const body = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff]; // "Exif\0\0"
    const length = body.length + 2;
    return concat(image.subarray(0, 2), [0xff, 0xe1, length >> 8, length & 0xff, ...body], image.subarray(2));
  }
  if (isPng(image)) {
    // The signature (8 bytes), then IHDR: length 4, type 4, 13 bytes of data, CRC 4.
    const afterHeader = 8 + 4 + 4 + 13 + 4;
    const typeAndData = [0x65, 0x58, 0x49, 0x66, ...tiff]; // "eXIf"
    const crc = CRC32.buf(typeAndData) >>> 0;
    const chunk = [...u32(tiff.length), ...typeAndData, ...u32(crc)];
    return concat(image.subarray(0, afterHeader), chunk, image.subarray(afterHeader));
  }
  throw new TypeError('only a JPEG or a PNG can be marked with a turn');
}

const u32 = (value: number) => [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];

function concat(head: Uint8Array, middle: number[], tail: Uint8Array): Uint8Array {
  const out = new Uint8Array(head.length + middle.length + tail.length);
  out.set(head);
  out.set(middle, head.length);
  out.set(tail, head.length + middle.length);
  return out;
}
