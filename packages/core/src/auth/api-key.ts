/**
 * API keys (CONTRACT §4). A key is
 * `ypk_test_` | `ypk_live_`, 32 random base62 characters, then a 6-character base62 CRC-32 of
 * everything before it, so a typo is caught without a lookup. Only SHA-256 hashes are stored.
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../encoding/hex.js";
import { accept, type Result, refuse } from "../result.js";
import { encodeBase62, isBase62, randomBase62 } from "./base62.js";
import { crc32 } from "./crc32.js";
import type { Environment } from "./environment.js";
import { systemRandom } from "./random.js";

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
 * Why `parseApiKey` refused a key. Callers answering a request say no more than "malformed or
 * unknown" (CONTRACT §4): the code is for logs and tests.
 * @example const code: ApiKeyRefusal = "bad_checksum";
 */
export type ApiKeyRefusal = "wrong_length" | "unknown_prefix" | "not_base62" | "bad_checksum";

function environmentOf(key: string): Environment | undefined {
  if (key.startsWith(API_KEY_PREFIXES.sandbox)) return "sandbox";
  if (key.startsWith(API_KEY_PREFIXES.production)) return "production";
  return undefined;
}

/**
 * Checks a key's shape offline: prefix, exact length, base62 characters, checksum; the value is
 * the environment its prefix names. It does not say whether the key exists; that takes a lookup
 * of its hash.
 * @example parseApiKey(generateApiKey("production")); // { ok: true, value: "production" }
 * @example parseApiKey("ypk_live_nope").code; // "wrong_length"
 */
export function parseApiKey(key: string): Result<Environment, ApiKeyRefusal> {
  if (key.length !== KEY_LENGTH) return refuse("wrong_length", `an API key is ${KEY_LENGTH} characters`);
  const environment = environmentOf(key);
  if (environment === undefined)
    return refuse("unknown_prefix", "an API key starts with ypk_test_ or ypk_live_");
  if (!isBase62(key.slice(PREFIX_CHARS))) return refuse("not_base62", "an API key ends in base62 characters");
  if (checksum(key.slice(0, PREFIX_CHARS + RANDOM_CHARS)) !== key.slice(PREFIX_CHARS + RANDOM_CHARS)) {
    return refuse("bad_checksum", "the API key's checksum does not match (a typo?)");
  }
  return accept(environment);
}

/**
 * The stored form of a key: lowercase hex SHA-256 of its UTF-8 bytes (CONTRACT §4).
 * @example hashApiKey("ypk_test_…"); // 64 hex characters
 */
export function hashApiKey(key: string, hash: (bytes: Uint8Array) => Uint8Array = sha256): string {
  return toHex(hash(encoder.encode(key)));
}
