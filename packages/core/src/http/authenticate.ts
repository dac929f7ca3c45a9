/**
 * Authentication (CONTRACT §4) and the failed-authentication limit per client address
 * (docs/contract.md, Authentication): a blocked address is answered 429 before its key is looked
 * at; each malformed, unknown, revoked or wrong-environment key counts as one failure, counted by
 * one atomic `hit` of the limiter.
 * @module
 */
import { hashApiKey, parseApiKey } from "../auth/api-key.js";
import { KeyHashCache } from "../auth/key-hash-cache.js";
import type { Partner } from "../stores/partner-store.js";
import { FAILED_AUTH_KEY_PREFIX } from "../stores/rate-limiter.js";
import type { ApiDependencies } from "./dependencies.js";
import { ApiError } from "./errors.js";
import type { PlainRequest } from "./plain-request.js";

const WINDOW_MS = 60_000;

/**
 * Per API instance (its dependencies): keys that passed `parseApiKey` for its environment → their
 * hash. The record is still looked up on every request, so revocation takes effect at once.
 */
const keyHashes = new WeakMap<object, KeyHashCache>();

type AuthDependencies = Pick<
  ApiDependencies,
  "environment" | "keys" | "partners" | "rateLimiter" | "sha256" | "failedAuthPerMinute"
>;

/**
 * The partner the request's `X-Api-Key` belongs to.
 * @throws ApiError `missing_api_key`, `invalid_api_key`, `wrong_environment` (401), or
 * `rate_limited` (429) when the client address has failed too often.
 */
export async function authenticate(request: PlainRequest, deps: AuthDependencies): Promise<Partner> {
  const limitKey = failedAuthKey(request.clientAddress);
  const blocked = await deps.rateLimiter.peek(limitKey, deps.failedAuthPerMinute, WINDOW_MS);
  if (!blocked.allowed) throw failedAuthLimited(blocked.retryAfterSeconds);
  const identified = await identify(request, deps);
  if (!(identified instanceof ApiError)) return identified;
  if (identified.code !== "missing_api_key") {
    // A failure past the limit is answered 429 even when concurrent guesses all passed the peek
    // above (a shared limiter such as Redis): counting it is one atomic step.
    const counted = await deps.rateLimiter.hit(limitKey, deps.failedAuthPerMinute, WINDOW_MS);
    if (!counted.allowed) throw failedAuthLimited(counted.retryAfterSeconds);
  }
  throw identified;
}

/**
 * The limiter key of a client address. Requests without one (an adapter that cannot tell) share
 * ONE bucket, never none: a NUL cannot occur in an address, so no client can take that bucket's key.
 */
export function failedAuthKey(clientAddress: string | undefined): string {
  return clientAddress === undefined
    ? `${FAILED_AUTH_KEY_PREFIX}\u0000unknown`
    : FAILED_AUTH_KEY_PREFIX + clientAddress;
}

/** The partner, or the refusal; a missing key is not a guess and is not counted. */
async function identify(request: PlainRequest, deps: AuthDependencies): Promise<Partner | ApiError> {
  const key = request.headers["x-api-key"];
  if (key === undefined || key === "") {
    return new ApiError("missing_api_key", "the X-Api-Key header is required");
  }
  let cache = keyHashes.get(deps);
  if (cache === undefined) {
    cache = new KeyHashCache();
    keyHashes.set(deps, cache);
  }
  let hash = cache.get(key);
  if (hash === undefined) {
    const parsed = parseApiKey(key);
    if (!parsed.ok) return new ApiError("invalid_api_key", "the API key is malformed or unknown");
    if (parsed.value !== deps.environment) {
      return new ApiError(
        "wrong_environment",
        `this is a ${parsed.value} key; this server is the ${deps.environment} environment`,
      );
    }
    hash = hashApiKey(key, deps.sha256);
    cache.set(key, hash);
  }
  const record = await deps.keys.findByHash(hash);
  if (record === undefined || record.status !== "active" || record.environment !== deps.environment) {
    return unknownKey();
  }
  return (await deps.partners.getPartner(record.partnerId)) ?? unknownKey();
}

function unknownKey(): ApiError {
  return new ApiError("invalid_api_key", "the API key is unknown or revoked");
}

function failedAuthLimited(retryAfterSeconds: number): ApiError {
  return new ApiError("rate_limited", "too many failed authentication attempts from this address", {
    headers: { "retry-after": String(retryAfterSeconds) },
  });
}
