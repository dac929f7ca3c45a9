/**
 * From a plaintext API key to the row `partners.json` stores under `api_keys` (its SHA-256 only),
 * for keys issued with `generateApiKey` — and the refusal of keys from another system. Such a key
 * could be stored, but it would never authenticate: the API checks the key's format (its prefix
 * names the environment, its last six characters are a checksum) before any lookup (CONTRACT §4).
 * docs/data.md, "Keys from an existing system", gives the reasons and the way to migrate.
 * @module
 */
import { API_KEY_PREFIXES, type Environment, hashApiKey, parseApiKey } from "@partner-yield/core";
import { nodeSha256 } from "@partner-yield/node-adapter";

/** One entry of a partner's `api_keys` in partners.json. */
export interface ApiKeyRow {
  readonly key_hash: string;
  readonly environment: Environment;
  readonly status: "active";
  readonly label?: string;
}

/** A key that is not one of ours; the message says why and what to do instead. */
export class ForeignApiKeyError extends Error {
  override readonly name = "ForeignApiKeyError";
}

const MIGRATION =
  "issue the partner a new key with generateApiKey (see docs/data.md, keys from an existing system)";

/**
 * The partners.json row for `key`, a key issued by `generateApiKey`.
 * @throws ForeignApiKeyError for a key of any other format, with the reason.
 * @example
 * const key = generateApiKey("sandbox");                  // give it to the partner, once
 * apiKeyRow(key, "Acme sandbox"); // { key_hash: "…64 hex…", environment: "sandbox", status: "active", label: "Acme sandbox" }
 */
export function apiKeyRow(key: string, label?: string): ApiKeyRow {
  const parsed = parseApiKey(key);
  if (!parsed.ok) throw new ForeignApiKeyError(refusal(key));
  const row = {
    key_hash: hashApiKey(key, nodeSha256),
    environment: parsed.value,
    status: "active" as const,
  };
  return label === undefined ? row : { ...row, label };
}

function refusal(key: string): string {
  const ours = Object.values(API_KEY_PREFIXES).some((prefix) => key.startsWith(prefix));
  if (ours)
    return (
      "this key has our prefix but is not one we issued: a key is the prefix, 32 base62 characters " +
      "and a 6-character checksum (47 characters in all), and this one's length or checksum is wrong — a typo?"
    );
  return (
    "a key of another format cannot be imported: the API refuses any key that does not start with " +
    `${API_KEY_PREFIXES.sandbox} or ${API_KEY_PREFIXES.production} and end with a valid checksum, before ` +
    `looking it up, so it would never authenticate; ${MIGRATION}`
  );
}
