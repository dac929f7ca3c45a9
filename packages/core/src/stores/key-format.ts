/**
 * The API key format port: how a presented `X-Api-Key` is recognised, checked, and turned into
 * what the key store is asked for (CONTRACT §4). Ours (`partnerYieldKeyFormat`) is the default: a
 * `ypk_test_` / `ypk_live_` key with a checksum, stored as its SHA-256. An embedding team whose
 * registry already holds keys of its own format (other prefixes, a peppered hash, a slow
 * verifier such as bcrypt or scrypt) passes its own format as `createPartnerApi`'s `keyFormat`
 * and keeps its keys.
 * @module
 */

import { hashApiKey, parseApiKey } from "../auth/api-key.js";
import type { Environment } from "../auth/environment.js";
import type { Result } from "../result.js";
import type { ApiKeyRecord } from "./key-store.js";
import type { MaybePromise } from "./maybe-promise.js";

/**
 * A key format. `check` and `hash` run on every request whose key is not in the API's small cache
 * of keys already checked (key → hash), so they must be cheap and deterministic; the key store is
 * asked for `hash(key)` on every request, so a revoked key is refused on its next one.
 *
 * @example
 * // A registry that stores HMAC-SHA256(pepper, key) of keys shaped "fc_test_…" / "fc_live_…":
 * const pepperedFormat: ApiKeyFormat = {
 *   check: (key) =>
 *     /^fc_(test|live)_[A-Za-z0-9]{24}$/.test(key)
 *       ? { ok: true, value: key.startsWith("fc_test_") ? "sandbox" : "production" }
 *       : { ok: false, code: "malformed", reason: "not an fc_ key" },
 *   hash: (key) => hmacHex(pepper, key),
 * };
 */
export interface ApiKeyFormat {
  /**
   * Recognises a presented key without any lookup: the environment it belongs to, `undefined`
   * when the format does not tell (the key record's environment is then the only check), or a
   * refusal (answered `401 invalid_api_key`, counted as a failed attempt). A key of the other
   * environment is answered `401 wrong_environment` before any lookup.
   */
  check(key: string): Result<Environment | undefined>;
  /**
   * What the key store is asked for (`KeyStore.findByHash`) and what an event's claim re-checks
   * (`EventCredentials.keyHash`): ours is the lowercase hex SHA-256 of the key. For a registry
   * that stores a salted verifier, the lookup part of the key (an id before the secret), with
   * `verify` doing the rest.
   */
  hash(key: string): string;
  /**
   * Optional: whether `key` is the key of the record found for `hash(key)` (a bcrypt or scrypt
   * verifier the team's store puts on its records). Called on every request that found an active
   * record, before the partner is looked up; false is answered like an unknown key. A slow
   * verifier should remember the pairs it has confirmed (a bounded map keyed by the key and the
   * record's verifier): nothing in the API caches a verdict.
   */
  verify?(key: string, record: ApiKeyRecord): MaybePromise<boolean>;
}

/**
 * Our format (CONTRACT §4): `ypk_test_` | `ypk_live_`, 32 base62 characters and a base62 CRC-32
 * (`parseApiKey`), stored as the SHA-256 of the key (`hashApiKey`) computed with `sha256`.
 * @example createPartnerApi({ …, keyFormat: partnerYieldKeyFormat(nodeSha256) });
 */
export function partnerYieldKeyFormat(sha256?: (data: Uint8Array) => Uint8Array): ApiKeyFormat {
  return {
    check: parseApiKey,
    hash: sha256 === undefined ? (key) => hashApiKey(key) : (key) => hashApiKey(key, sha256),
  };
}
