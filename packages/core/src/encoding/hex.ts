/**
 * Lowercase hexadecimal: key hashes, event fingerprints, signatures as clients send them.
 * @module
 */

const HEX_DIGIT: readonly number[] = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** Bytes turned into text per `String.fromCharCode` call: a SHA-256 digest in one. */
const BATCH = 32;
/** The character codes of one batch, reused (each call builds its text from them at once). */
const codes: number[] = new Array<number>(2 * BATCH).fill(0);

/**
 * Lowercase hex of some bytes. Built from character codes, 32 bytes a `String.fromCharCode` call,
 * not two characters appended a byte (a new string each time).
 * @example toHex(new Uint8Array([0, 255])); // "00ff"
 */
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let start = 0; start < bytes.length; start += BATCH) {
    const end = Math.min(bytes.length, start + BATCH);
    for (let i = start; i < end; i++) {
      const byte = bytes[i]!;
      codes[2 * (i - start)] = HEX_DIGIT[byte >> 4]!;
      codes[2 * (i - start) + 1] = HEX_DIGIT[byte & 15]!;
    }
    const used = 2 * (end - start);
    out += String.fromCharCode.apply(null, used === codes.length ? codes : codes.slice(0, used));
  }
  return out;
}
