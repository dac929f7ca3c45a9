/**
 * The per-partner rate limit (CONTRACT §7): every authenticated request counts, refused ones do
 * not. The step returns the IETF `RateLimit` headers with its verdict, so the caller adds them to
 * whatever the request is answered with, a refusal included. `handle()` asks the limiter to `hit`
 * the partner's `limiterKey` with its quota, then turns the decision into a `requestCount`.
 * @module
 */
import type { RateDecision } from "../stores/rate-limiter.js";
import { ApiError } from "./errors.js";

/** The verdict on one request: its headers, and the 429 when it is over the quota. */
export interface RequestCount {
  readonly headers: Readonly<Record<string, string>>;
  readonly refusal: ApiError | undefined;
}

/** The window of the per-partner rate limit. */
export const RATE_WINDOW_MS = 60_000;

/** The verdict on a request from the limiter's decision on its hit. */
export function requestCount(environment: string, quota: number, decision: RateDecision): RequestCount {
  const headers = rateLimitHeaders(environment, decision);
  if (decision.allowed) return { headers, refusal: undefined };
  return {
    headers,
    refusal: new ApiError("rate_limited", `rate limit of ${quota} requests per 60 seconds exceeded`, {
      headers: { "retry-after": String(decision.retryAfterSeconds) },
    }),
  };
}

let lastPartnerId: string | undefined;
let lastEnvironment: string | undefined;
let lastLimiterKey = "";

/**
 * The limiter key of a partner in an environment. The last one is kept: a partner's requests tend
 * to come in runs, and a new string per request would be built, then flattened to be hashed.
 */
export function limiterKey(partnerId: string, environment: string): string {
  if (partnerId !== lastPartnerId || environment !== lastEnvironment) {
    lastPartnerId = partnerId;
    lastEnvironment = environment;
    lastLimiterKey = `rate:${partnerId}:${environment}`;
  }
  return lastLimiterKey;
}

let lastPolicyEnvironment: string | undefined;
let lastPolicyLimit = -1;
let lastPolicy = "";

/** IETF RateLimit headers (CONTRACT §7); the policy's name is the environment. */
function rateLimitHeaders(environment: string, decision: RateDecision): Record<string, string> {
  if (environment !== lastPolicyEnvironment || decision.limit !== lastPolicyLimit) {
    lastPolicyEnvironment = environment;
    lastPolicyLimit = decision.limit;
    lastPolicy = `"${environment}";q=${decision.limit};w=60`;
  }
  return {
    "ratelimit-policy": lastPolicy,
    ratelimit: `"${environment}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
