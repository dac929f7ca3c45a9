/**
 * The per-partner rate limit (CONTRACT §7): every authenticated request counts, refused ones do
 * not. The step returns the IETF `RateLimit` headers with its verdict, so the caller adds them to
 * whatever the request is answered with, a refusal included.
 * @module
 */
import type { Partner } from "../stores/partner-store.js";
import type { RateDecision } from "../stores/rate-limiter.js";
import type { ApiDependencies } from "./dependencies.js";
import { ApiError } from "./errors.js";

const WINDOW_MS = 60_000;

/** The verdict on one request: its headers, and the 429 when it is over the quota. */
export interface RequestCount {
  readonly headers: Readonly<Record<string, string>>;
  readonly refusal: ApiError | undefined;
}

/**
 * Counts the request against the partner's quota in this environment.
 * @example const { headers, refusal } = await countRequest(partner, deps); // headers.ratelimit: '"sandbox";r=99;t=60'
 */
export async function countRequest(
  partner: Partner,
  deps: Pick<ApiDependencies, "environment" | "rateLimiter" | "quotaOf">,
): Promise<RequestCount> {
  const quota = deps.quotaOf(partner);
  const decision = await deps.rateLimiter.hit(`rate:${partner.id}:${deps.environment}`, quota, WINDOW_MS);
  const headers = rateLimitHeaders(deps.environment, decision);
  if (decision.allowed) return { headers, refusal: undefined };
  return {
    headers,
    refusal: new ApiError("rate_limited", `rate limit of ${quota} requests per 60 seconds exceeded`, {
      headers: { "retry-after": String(decision.retryAfterSeconds) },
    }),
  };
}

/** IETF RateLimit headers (CONTRACT §7); the policy's name is the environment. */
function rateLimitHeaders(environment: string, decision: RateDecision): Record<string, string> {
  return {
    "ratelimit-policy": `"${environment}";q=${decision.limit};w=60`,
    ratelimit: `"${environment}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
