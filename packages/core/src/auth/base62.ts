/**
 * Base62 (`0-9A-Za-z`), the alphabet of API keys (CONTRACT §4).
 * @module
 */

/**
 * Digits in value order: `"0"` is 0, `"A"` is 10, `"a"` is 36, `"z"` is 61.
 * @example BASE62_ALPHABET.indexOf("z"); // 61
 */
export const BASE62_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const BASE = 62n;

/**
 * A non-negative integer in base62, left-padded with `"0"` to exactly `width` characters.
 * @throws RangeError when the value is negative or needs more than `width` digits.
 * @example encodeBase62(0xcbf43926n, 6); // "3jZRME"
 */
export function encodeBase62(value: bigint, width: number): string {
  if (value < 0n) throw new RangeError("base62 encodes non-negative integers only");
  let rest = value;
  let out = "";
  while (rest > 0n) {
    out = BASE62_ALPHABET.charAt(Number(rest % BASE)) + out;
    rest /= BASE;
  }
  if (out.length > width)
    throw new RangeError(`${value} needs ${out.length} base62 digits, more than ${width}`);
  return out.padStart(width, "0");
}

/**
 * True when every character is a base62 digit (the empty string included).
 * @example isBase62("abc123"); // true
 * @example isBase62("abc-123"); // false
 */
export function isBase62(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const digit = (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
    if (!digit) return false;
  }
  return true;
}

/**
 * `length` uniformly random base62 characters by rejection sampling: a byte is used only when
 * below 248 = 4 × 62, so `byte % 62` has no bias.
 * @example randomBase62(32, (n) => crypto.getRandomValues(new Uint8Array(n))); // "q3V…" (32 chars)
 */
export function randomBase62(length: number, random: (n: number) => Uint8Array): string {
  let out = "";
  while (out.length < length) {
    for (const byte of random(length - out.length + 8)) {
      if (byte < 248 && out.length < length) out += BASE62_ALPHABET.charAt(byte % 62);
    }
  }
  return out;
}
