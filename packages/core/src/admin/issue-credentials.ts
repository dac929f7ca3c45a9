/**
 * A new key or signing secret with what a backend stores of it (CONTRACT §4): for a key, its
 * SHA-256 hash and the parts shown in lists (prefix, last four characters) — never the key.
 * @module
 */
import { API_KEY_PREFIXES, generateApiKey, hashApiKey } from "../auth/api-key.js";
import type { Environment } from "../auth/environment.js";
import { systemRandom } from "../auth/random.js";
import { generateSigningSecret } from "../auth/signing-secret.js";

/** A key just generated: `apiKey` goes to the partner once; the rest is stored. */
export interface NewKeyMaterial {
  readonly apiKey: string;
  readonly keyHash: string;
  readonly prefix: string;
  readonly lastFour: string;
}

/**
 * @example issueApiKey("sandbox"); // { apiKey: "ypk_test_…", keyHash: "…64 hex…", prefix: "ypk_test_", lastFour: "…" }
 */
export function issueApiKey(
  environment: Environment,
  random: (n: number) => Uint8Array = systemRandom,
  sha256?: (bytes: Uint8Array) => Uint8Array,
): NewKeyMaterial {
  const apiKey = generateApiKey(environment, random);
  return {
    apiKey,
    keyHash: sha256 === undefined ? hashApiKey(apiKey) : hashApiKey(apiKey, sha256),
    prefix: API_KEY_PREFIXES[environment],
    lastFour: lastFourOf(apiKey),
  };
}

/**
 * A new signing secret (`whsec_…`, CONTRACT §4) and its last four characters.
 * @example issueSigningSecret().secret.startsWith("whsec_"); // true
 */
export function issueSigningSecret(random: (n: number) => Uint8Array = systemRandom): {
  readonly secret: string;
  readonly lastFour: string;
} {
  const secret = generateSigningSecret(random);
  return { secret, lastFour: lastFourOf(secret) };
}

/**
 * The last four characters, which tell keys (or secrets) apart in a list without revealing them:
 * of a key they are part of its checksum; of a secret, 24 of its 192 random bits.
 * @example lastFourOf("ypk_test_…Wx3Z"); // "Wx3Z"
 */
export function lastFourOf(credential: string): string {
  return credential.slice(-4);
}
