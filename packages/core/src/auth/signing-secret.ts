/**
 * Webhook signing secrets (CONTRACT §4): `whsec_` + 32 base64url characters; the HMAC key is the
 * UTF-8 bytes of the whole string as issued.
 * @module
 */
import { systemRandom } from "./random.js";

const BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const SECRET_PREFIX = "whsec_";
const SECRET_CHARS = 32;
const SIGNING_SECRET = /^whsec_[A-Za-z0-9_-]{32}$/;

/**
 * A new webhook signing secret: `whsec_` + 32 base64url characters, 192 random bits
 * (CONTRACT §4). The HMAC key is the whole string.
 * @example generateSigningSecret(); // "whsec_" + 32 chars of [A-Za-z0-9_-]
 */
export function generateSigningSecret(random: (n: number) => Uint8Array = systemRandom): string {
  let out = SECRET_PREFIX;
  // 256 is a multiple of 64: the low six bits of a uniform byte are uniform.
  for (const byte of random(SECRET_CHARS)) out += BASE64URL_ALPHABET.charAt(byte & 63);
  if (out.length !== SECRET_PREFIX.length + SECRET_CHARS)
    throw new RangeError("random source returned too few bytes");
  return out;
}

/**
 * True for a string of the signing-secret shape `whsec_` + 32 base64url characters.
 * @example isSigningSecret("whsec_" + "A".repeat(32)); // true
 */
export function isSigningSecret(s: string): boolean {
  return s.length === SECRET_PREFIX.length + SECRET_CHARS && SIGNING_SECRET.test(s);
}
