/**
 * API keys and webhook signing secrets (CONTRACT §4). A key is
 * `ypk_test_` | `ypk_live_`, 32 random base62 characters, then a 6-character base62 CRC-32 of
 * everything before it, so a typo is caught without a lookup. Only SHA-256 hashes are stored.
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { encodeBase62, isBase62, randomBase62 } from "./base62.js";
import { crc32 } from "./crc32.js";
import { toHex } from "./signature.js";

/**
 * The environment a key belongs to (CONTRACT §4, §9).
 * @example const env: Environment = "sandbox";
 */
export type Environment = "sandbox" | "production";

/**
 * Key prefix per environment.
 * @example API_KEY_PREFIXES.production; // "ypk_live_"
 */
export const API_KEY_PREFIXES: Readonly<Record<Environment, string>> = Object.freeze({
  sandbox: "ypk_test_",
  production: "ypk_live_",
});

const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
const PREFIX_CHARS = 9;
const KEY_LENGTH = PREFIX_CHARS + RANDOM_CHARS + CHECKSUM_CHARS;
const encoder = new TextEncoder();

function systemRandom(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

function checksum(body: string): string {
  return encodeBase62(BigInt(crc32(encoder.encode(body))), CHECKSUM_CHARS);
}

/**
 * A new API key; show it once, store only `hashApiKey(key)`.
 * @example generateApiKey("sandbox"); // "ypk_test_" + 32 random base62 + 6 checksum (47 chars)
 */
export function generateApiKey(
  environment: Environment,
  random: (n: number) => Uint8Array = systemRandom,
): string {
  const body = API_KEY_PREFIXES[environment] + randomBase62(RANDOM_CHARS, random);
  return body + checksum(body);
}

/**
 * The outcome of `parseApiKey`: well-formed keys name their environment; nothing else is said.
 * @example const r: ParsedApiKey = { ok: true, environment: "production" };
 */
export type ParsedApiKey = { ok: true; environment: Environment } | { ok: false };

function environmentOf(key: string): Environment | undefined {
  if (key.startsWith(API_KEY_PREFIXES.sandbox)) return "sandbox";
  if (key.startsWith(API_KEY_PREFIXES.production)) return "production";
  return undefined;
}

/**
 * Checks a key's shape offline: prefix, exact length, base62 characters, checksum. It does not
 * say whether the key exists; that takes a lookup of its hash.
 * @example parseApiKey(generateApiKey("production")); // { ok: true, environment: "production" }
 * @example parseApiKey("ypk_live_nope"); // { ok: false }
 */
export function parseApiKey(key: string): ParsedApiKey {
  if (key.length !== KEY_LENGTH) return { ok: false };
  const environment = environmentOf(key);
  if (environment === undefined) return { ok: false };
  const body = key.slice(0, PREFIX_CHARS + RANDOM_CHARS);
  const tail = key.slice(PREFIX_CHARS);
  if (!isBase62(tail) || checksum(body) !== key.slice(PREFIX_CHARS + RANDOM_CHARS)) return { ok: false };
  return { ok: true, environment };
}

/**
 * The stored form of a key: lowercase hex SHA-256 of its UTF-8 bytes (CONTRACT §4).
 * @example hashApiKey("ypk_test_…"); // 64 hex characters
 */
export function hashApiKey(key: string, hash: (bytes: Uint8Array) => Uint8Array = sha256): string {
  return toHex(hash(encoder.encode(key)));
}

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
