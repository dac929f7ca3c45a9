/**
 * Lowercase hexadecimal: key hashes, event fingerprints, signatures as clients send them.
 * @module
 */

const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * Lowercase hex of some bytes.
 * @example toHex(new Uint8Array([0, 255])); // "00ff"
 */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += HEX_BYTE[byte];
  return out;
}
