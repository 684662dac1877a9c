// SHA-256 through WebCrypto, as lowercase hex: the one digest the app names files and checks
// downloads, stack files and checkpoint chunks by.

/**
 * The SHA-256 of `bytes` as hex: all 32 bytes of the digest (64 characters), or its first
 * `length` bytes (checkpoint chunks are named by the first 16).
 */
export async function sha256Hex(bytes: Uint8Array, length = 32): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (let i = 0; i < Math.min(length, digest.length); i++) hex += digest[i]!.toString(16).padStart(2, '0');
  return hex;
}
