// A quarter turn handed to tesseract as the image's EXIF orientation. Turning a page by
// `rotateRadians` keeps the image's frame, so a landscape photo of a portrait page loses its top
// and bottom; an EXIF orientation makes tesseract.js's core turn the pixels losslessly into a
// frame of the turned size (as it does for a phone photo that carries one), with the skew still
// straightened by `rotateRadians` afterwards. tesseract.js looks for a big-endian orientation tag
// in the image's first 500 bytes, so the mark goes first: a JPEG APP1 segment right after its
// start, a PNG eXIf chunk right after its header. A greyscale PGM (a drawn PDF page) is simply
// turned, pixel by pixel.
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

/** Whether withQuarterTurn can turn this image (a JPEG or a PNG, marked; a greyscale PGM, turned). */
export function canTurn(image: Uint8Array): boolean {
  return isJpeg(image) || isPng(image) || pgmHeader(image) !== null;
}

/** A greyscale page as a binary PGM (`P5`): what a drawn PDF page is handed to OCR as, with nothing to encode or decode. */
export function greyPgm(rgba: Uint8ClampedArray, width: number, height: number): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + width * height);
  out.set(header);
  for (let i = 0, j = header.length; i < rgba.length; i += 4, j++) out[j] = (rgba[i]! * 77 + rgba[i + 1]! * 150 + rgba[i + 2]! * 29) >> 8;
  return out;
}

/** A binary PGM's size and where its pixels start, or null for anything else. */
function pgmHeader(image: Uint8Array): { width: number; height: number; offset: number } | null {
  if (image[0] !== 0x50 || image[1] !== 0x35) return null; // "P5"
  const match = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(new TextDecoder('latin1').decode(image.subarray(0, 64)));
  if (!match) return null;
  const [width, height, offset] = [Number(match[1]), Number(match[2]), match[0].length];
  return image.length >= offset + width * height ? { width, height, offset } : null;
}

/** A PGM's pixels turned clockwise by a quarter, a half or three quarters. */
function turnPgm(image: Uint8Array, turn: number): Uint8Array {
  const { width, height, offset } = pgmHeader(image)!;
  const pixels = image.subarray(offset, offset + width * height);
  const sideways = turn !== 180;
  const [w, h] = sideways ? [height, width] : [width, height];
  const header = new TextEncoder().encode(`P5\n${w} ${h}\n255\n`);
  const out = new Uint8Array(header.length + w * h);
  out.set(header);
  const target = out.subarray(header.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const value = pixels[y * width + x]!;
      if (turn === 90) target[x * w + (height - 1 - y)] = value;
      else if (turn === 270) target[(width - 1 - x) * w + y] = value;
      else target[(height - 1 - y) * w + (width - 1 - x)] = value;
    }
  }
  return out;
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
  if (pgmHeader(image)) return turnPgm(image, turn);
  throw new TypeError('only a JPEG, a PNG or a PGM can be turned');
}

const u32 = (value: number) => [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];

function concat(head: Uint8Array, middle: number[], tail: Uint8Array): Uint8Array {
  const out = new Uint8Array(head.length + middle.length + tail.length);
  out.set(head);
  out.set(middle, head.length);
  out.set(tail, head.length + middle.length);
  return out;
}
