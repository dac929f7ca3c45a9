/**
 * Authentication (CONTRACT §4) and the failed-authentication limit per client address
 * (docs/contract.md, Authentication): a blocked address is answered 429 before its key is looked
 * at; each malformed, unknown, revoked or wrong-environment key counts as one failure, counted by
 * one atomic `hit` of the limiter.
 * @module
 */
import { hashApiKey, parseApiKey } from "../auth/api-key.js";
import type { Partner } from "../stores/partner-store.js";
import { FAILED_AUTH_KEY_PREFIX } from "../stores/rate-limiter.js";
import type { ApiDependencies } from "./dependencies.js";
import { ApiError } from "./errors.js";
import type { PlainRequest } from "./plain-request.js";

const WINDOW_MS = 60_000;

type AuthDependencies = Pick<
  ApiDependencies,
  "environment" | "keys" | "partners" | "rateLimiter" | "sha256" | "failedAuthPerMinute" | "keyHashes"
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
  // The stores are asked here rather than in a helper: one async function, not two, per request.
  const hash = keyHash(request, deps);
  let refusal: ApiError;
  if (typeof hash === "string") {
    const record = await deps.keys.findByHash(hash);
    if (record !== undefined && record.status === "active" && record.environment === deps.environment) {
      const partner = await deps.partners.getPartner(record.partnerId);
      if (partner !== undefined) return partner;
    }
    refusal = unknownKey();
  } else {
    refusal = hash;
  }
  if (refusal.code !== "missing_api_key") {
    // A failure past the limit is answered 429 even when concurrent guesses all passed the peek
    // above (a shared limiter such as Redis): counting it is one atomic step.
    const counted = await deps.rateLimiter.hit(limitKey, deps.failedAuthPerMinute, WINDOW_MS);
    if (!counted.allowed) throw failedAuthLimited(counted.retryAfterSeconds);
  }
  throw refusal;
}

let lastAddress: string | undefined;
let lastAddressKey = `${FAILED_AUTH_KEY_PREFIX}\u0000unknown`;

/**
 * The limiter key of a client address. Requests without one (an adapter that cannot tell) share
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

/**
 * The stored hash of the request's key, or the refusal when there is none to look up: a missing
 * key (not a guess: not counted), a malformed one, or one of the other environment. Keys that
 * passed these checks are cached with their hash (`deps.keyHashes`); the record is still looked up
 * on every request, so revocation takes effect at once.
 */
function keyHash(request: PlainRequest, deps: AuthDependencies): string | ApiError {
  const key = request.headers["x-api-key"];
  if (key === undefined || key === "") {
    return new ApiError("missing_api_key", "the X-Api-Key header is required");
  }
  let hash = deps.keyHashes.get(key);
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
    deps.keyHashes.set(key, hash);
  }
  return hash;
}

function unknownKey(): ApiError {
  return new ApiError("invalid_api_key", "the API key is unknown or revoked");
}

function failedAuthLimited(retryAfterSeconds: number): ApiError {
  return new ApiError("rate_limited", "too many failed authentication attempts from this address", {
    headers: { "retry-after": String(retryAfterSeconds) },
  });
}
