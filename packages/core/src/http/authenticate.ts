/**
 * Authentication (CONTRACT §4) and the failed-authentication limit (docs/contract.md,
 * Authentication): a usable key is served whatever its address has failed; each malformed,
 * unknown, revoked or wrong-environment key counts as one failure against the client's address
 * and one against the key presented (one atomic `hit` of the limiter each), and a failure past
 * either limit is answered 429 instead of 401.
 *
 * The steps, in order, as `handle()` runs them in its own frame (one async function per request,
 * not one per step: docs/performance.md): `keyHash` → the key store → `usableKey` → the partner
 * store; no partner → `refuseKey`.
 * @module
 */
import { accept, type Result, refuse } from "../result.js";
import type { ApiKeyRecord } from "../stores/key-store.js";
import { type AnyAnswer, awaits, isPromiseLike, type MaybePromise } from "../stores/maybe-promise.js";
import type { Partner } from "../stores/partner-store.js";
import { FAILED_AUTH_KEY_PREFIX } from "../stores/rate-limiter.js";
import type { ApiDependencies } from "./dependencies.js";
import { ApiError } from "./errors.js";
import type { PlainRequest } from "./plain-request.js";

type AuthDependencies = Pick<
  ApiDependencies,
  | "environment"
  | "rateLimiter"
  | "keyFormat"
  | "failedAuthPerMinute"
  | "addressBucket"
  | "keyHashes"
  | "keys"
  | "partners"
>;

/** The window of the failed-authentication limit. */
export const FAILED_AUTH_WINDOW_MS = 60_000;

/** Whether the key record found may authenticate here: active, of this environment. */
export function usableKey(
  record: ApiKeyRecord | undefined,
  deps: Pick<ApiDependencies, "environment">,
): record is ApiKeyRecord {
  return record !== undefined && record.status === "active" && record.environment === deps.environment;
}

/**
 * The refusal of a request whose key found no partner (`hash` is the refusal already made when
 * there was nothing to look up). Every failure but a missing key counts against the client's
 * address, and a well-formed key's also against that key (`failedKeyKey`): a stale client
 * retrying one revoked key is limited on its own key as well as on its address, wherever it
 * retries from. Unknown and revoked keys are counted alike, so the limit tells them apart no
 * more than the 401 does.
 * @throws ApiError always: 401, or `rate_limited` (429) when this failure is over either limit.
 */
export async function refuseKey(
  hash: Result<string, KeyRefusal>,
  clientAddress: string | undefined,
  deps: Pick<AuthDependencies, "rateLimiter" | "failedAuthPerMinute" | "addressBucket">,
): Promise<never> {
  const refusal = hash.ok ? unknownKeyError() : new ApiError(hash.code, hash.reason);
  if (refusal.code !== "missing_api_key") {
    // Counting is one atomic hit per bucket: a failure past the limit is 429 even when many
    // arrive at once on several instances (a shared limiter such as Redis).
    const limit = deps.failedAuthPerMinute;
    const address = clientAddress === undefined ? undefined : deps.addressBucket(clientAddress);
    let byAddress = deps.rateLimiter.hit(failedAuthKey(address), limit, FAILED_AUTH_WINDOW_MS);
    if (isPromiseLike(byAddress)) byAddress = await byAddress;
    let byKey = hash.ok
      ? deps.rateLimiter.hit(failedKeyKey(hash.value), limit, FAILED_AUTH_WINDOW_MS)
      : undefined;
    if (isPromiseLike(byKey)) byKey = await byKey;
    const wait = Math.max(
      byAddress.allowed ? 0 : byAddress.retryAfterSeconds,
      byKey === undefined || byKey.allowed ? 0 : byKey.retryAfterSeconds,
    );
    if (!byAddress.allowed || (byKey !== undefined && !byKey.allowed)) throw failedAuthLimited(wait);
  }
  throw refusal;
}

/**
 * The limiter key of a presented key's failures (by its stored hash). It shares the failed-auth
 * prefix, and so the in-memory limiter's cap on failed-auth entries; a \u0001 cannot occur in an
 * address, so no client address can take it.
 */
export function failedKeyKey(keyHash: string): string {
  return `${FAILED_AUTH_KEY_PREFIX}\u0001${keyHash}`;
}

let lastAddress: string | undefined;
let lastAddressKey = `${FAILED_AUTH_KEY_PREFIX}\u0000unknown`;

/**
 * The limiter key of a client address (its bucket: `addressBucket`). Requests without one (an adapter that cannot tell) share
 * ONE bucket, never none: a NUL cannot occur in an address, so no client can take that bucket's key.
 */
export function failedAuthKey(clientAddress: string | undefined): string {
  if (clientAddress === undefined) return `${FAILED_AUTH_KEY_PREFIX}\u0000unknown`;
  // The last address's key is kept: a keep-alive client sends many requests in a row, and a new
  // string per request would be concatenated, then flattened to be hashed by the limiter's map.
  if (clientAddress !== lastAddress) {
    lastAddress = clientAddress;
    lastAddressKey = FAILED_AUTH_KEY_PREFIX + clientAddress;
  }
  return lastAddressKey;
}

/** Why a request's key was refused before any lookup: each is answered 401 with this code. */
export type KeyRefusal = "missing_api_key" | "invalid_api_key" | "wrong_environment";

/**
 * The stored hash of the request's key (`ApiKeyFormat.hash`), or the refusal when there is none to
 * look up: a missing key (not a guess: not counted), one the format does not accept, or one of the
 * other environment. Keys that passed these checks are cached with their hash (`deps.keyHashes`);
 * the record is still looked up on every request, so revocation takes effect at once.
 */
export function keyHash(
  request: PlainRequest,
  deps: Pick<AuthDependencies, "environment" | "keyFormat" | "keyHashes">,
): Result<string, KeyRefusal> {
  const key = request.headers["x-api-key"];
  if (key === undefined || key === "") return refuse("missing_api_key", "the X-Api-Key header is required");
  let hash = deps.keyHashes.get(key);
  if (hash === undefined) {
    const checked = deps.keyFormat.check(key);
    if (!checked.ok) return refuse("invalid_api_key", "the API key is malformed or unknown");
    if (checked.value !== undefined && checked.value !== deps.environment) {
      return refuse(
        "wrong_environment",
        `this is a ${checked.value} key; this server is the ${deps.environment} environment`,
      );
    }
    hash = accept(deps.keyFormat.hash(key));
    deps.keyHashes.set(key, hash);
  }
  return hash;
}

/**
 * The partner of an authenticated key as the stores hold it now (after a body: CONTRACT §4, a
 * revoked key fails from the next moment it is checked). Answers at once when the stores do.
 * A key no longer usable is refused like an unknown one, and not counted as a failed guess: its
 * holder authenticated a moment ago.
 * @throws ApiError `invalid_api_key` (401) when the key or its partner is gone or revoked.
 * @example const current = currentPartner(keyHash, deps); const partner = awaits(current, (current as AnyAnswer)?.then) ? await current : current;
 */
export function currentPartner(
  keyHash: string,
  deps: Pick<ApiDependencies, "environment" | "keys" | "partners">,
): MaybePromise<Partner> {
  const record = deps.keys.findByHash(keyHash);
  return awaits(record, (record as AnyAnswer)?.then)
    ? record.then((r) => partnerOf(r, deps))
    : partnerOf(record, deps);
}

function partnerOf(
  record: ApiKeyRecord | undefined,
  deps: Pick<ApiDependencies, "environment" | "partners">,
): MaybePromise<Partner> {
  if (!usableKey(record, deps)) throw unknownKeyError();
  const partner = deps.partners.getPartner(record.partnerId);
  if (awaits(partner, (partner as AnyAnswer)?.then))
    return partner.then((p) => {
      if (p === undefined) throw unknownKeyError();
      return p;
    });
  if (partner === undefined) throw unknownKeyError();
  return partner;
}

/** `401 invalid_api_key` for a well-formed key that is unknown or revoked (the two look alike). */
export function unknownKeyError(): ApiError {
  return new ApiError("invalid_api_key", "the API key is unknown or revoked");
}

function failedAuthLimited(retryAfterSeconds: number): ApiError {
  return new ApiError(
    "rate_limited",
    "too many failed authentication attempts from this address or with this key",
    {
      headers: { "retry-after": String(retryAfterSeconds) },
    },
  );
}
